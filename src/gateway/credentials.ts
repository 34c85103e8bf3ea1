// The wiring's one face of per-user credentials (credentials:, servers.<name>.credentials, secrets:): the
// store, the OAuth clients and token exchange, the connect and paste pages and their stack layers live in
// src/credentials/ and src/layers/, and are loaded (credentials-loaded.ts) only when the config uses them. A
// gateway without them holds none of their modules (nor jose) and keeps the small stand-in below; a reload
// that adds a server reached as each caller loads them then, as the start would have.
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Log } from '../../infra/log.js';
import type { CallerConnections } from '../aggregate/connect-placeholder.js';
import type { GatewayConfig, ServerConfig } from '../config/config.js';
import type { ChildEnvSource } from '../layers/per-caller/per-caller-upstream.js';
import type { CallerLayers } from '../layers/stack.js';

/** How one server reaches its callers' own credential or values: its stack's layers and its children's env. */
export interface CallerReach extends CallerLayers {
  /** A perCaller server's children's per-caller environment (secrets, an OAuth token). */
  env?: ChildEnvSource | undefined;
}

export type Authenticate = (authorization: string | undefined) => Promise<string | undefined>;

export interface GatewayCredentials extends CallerConnections {
  /** Undefined for a server with neither `credentials:` nor per-caller `secrets:`. Cold path (a server's start). */
  reachOf(name: string, server: ServerConfig): Promise<CallerReach | undefined>;
  /** A caller's connection to a server was made or revoked (here or on another replica); `isFor` says whose. */
  onConnectionChange(listener: (server: string, isFor: (principal: string) => boolean) => void): void;
  /** Connections per server, for the status page; undefined without a store. */
  readonly counts: (() => Promise<ReadonlyMap<string, number>>) | undefined;
  /** The connect and paste pages and the callers' list of connections (only with a store). */
  addRoutes(app: Hono<{ Bindings: HttpBindings }>, authenticate: Authenticate): void;
  /** What an operator must know at start (redirect URIs, where connections are kept). */
  announce(): void;
  close(): Promise<void>;
}

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
