// The wiring's one face of per-user credentials (credentials:, servers.<name>.credentials, secrets:): the
// store, the OAuth clients and token exchange, the connect and paste pages and their stack layers live in
// src/credentials/ and src/layers/, and are loaded (credentials-loaded.ts) only when the config uses them. A
// gateway without them holds none of their modules (nor jose) and keeps the small stand-in below; a reload
// that adds a server reached as each caller loads them then, as the start would have.
import type { Log } from '../../infra/log.js';
import type { GatewayConfig, ServerConfig } from '../config/index.js';
import type { CallerReach, GatewayCredentials } from './credentials-face.js';

export type { Authenticate, CallerReach, GatewayCredentials } from './credentials-face.js';

/** `current`: the live config, read where a reload must show. */
export async function openCredentials(
  config: GatewayConfig,
  log: Log,
  current: () => GatewayConfig,
): Promise<GatewayCredentials> {
  const load = () => import('./credentials-loaded.js').then((m) => m.LoadedCredentials.open(config, log, current));
  return usesCredentials(config) ? load() : new NotYetLoaded(load);
}

/** Whether the config has a store, or a server that reaches its callers' own credential or values. */
function usesCredentials(config: GatewayConfig): boolean {
  return config.credentials !== undefined || Object.values(config.servers).some(reachesCallers);
}

function reachesCallers(server: ServerConfig): boolean {
  return ('credentials' in server && server.credentials !== undefined) || ('secrets' in server && !!server.secrets);
}

/**
 * A start without credentials: nothing to connect, no pages. The store is opened at start only, so what a
 * reload can add later is a server reached as each caller without one (token exchange): the modules are
 * loaded for it then, and answer from there on.
 */
class NotYetLoaded implements GatewayCredentials {
  private loaded: Promise<GatewayCredentials> | undefined;
  private ready: GatewayCredentials | undefined;
  readonly counts = undefined;

  constructor(private readonly load: () => Promise<GatewayCredentials>) {}

  async reachOf(name: string, server: ServerConfig): Promise<CallerReach | undefined> {
    if (!this.ready && !reachesCallers(server)) return undefined;
    this.loaded ??= this.load();
    this.ready = await this.loaded;
    return this.ready.reachOf(name, server);
  }

  needs(server: string): 'account' | 'secrets' | undefined {
    return this.ready?.needs(server);
  }

  connected(server: string, principal: string): Promise<boolean> {
    return this.ready ? this.ready.connected(server, principal) : Promise.resolve(false);
  }

  // Without a store there is no connection to change, loaded or not.
  onConnectionChange(): void {}
  addRoutes(): void {}
  announce(): void {}

  async close(): Promise<void> {
    await this.ready?.close();
  }
}
