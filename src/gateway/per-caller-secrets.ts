// Per-caller secrets as the gateway runs them: one SecretEnv per perCaller server with secrets:, over the
// credential store (the one store of src/credentials/, shared with OAuth connections), and the paste page.
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Log } from '../../infra/log.js';
import type { GatewayConfig, ServerConfig } from '../config/config.js';
import { addSecretRoutes } from '../credentials/secret-routes.js';
import type { CredentialStore } from '../credentials/store.js';
import { SecretEnv } from '../layers/per-caller/secret-env.js';

export class PerCallerSecrets {
  private readonly byServer = new Map<string, SecretEnv>();

  constructor(
    private readonly config: () => GatewayConfig,
    private readonly store: CredentialStore | undefined,
    private readonly log: Log,
  ) {}

  /** The source of a perCaller server's secrets; undefined for any other server. */
  envFor(name: string, server: ServerConfig): SecretEnv | undefined {
    const { credentials, listen } = this.config();
    if (server.transport !== 'stdio' || !server.perCaller || !server.secrets || !this.store || !credentials || !listen.publicUrl) {
      this.byServer.delete(name);
      return undefined;
    }
    const source = new SecretEnv(this.store, { server: name, secrets: server.secrets, publicUrl: listen.publicUrl, linkTtlMs: credentials.linkTtlMs });
    this.byServer.set(name, source);
    return source;
  }

  /** Whether a caller must paste values for `server` before its child runs (and its lists can be read). */
  needsConnect(server: string): boolean {
    return this.byServer.has(server);
  }

  /** Whether this principal's values for `server` are stored, every one of them. */
  async connected(server: string, principal: string): Promise<boolean> {
    return (await this.byServer.get(server)?.values(principal)) !== undefined;
  }

  /** The paste page, and the callers' list of connections unless `connections` is false (served elsewhere). */
  addRoutes(app: Hono<{ Bindings: HttpBindings }>, authenticate: (authorization: string | undefined) => Promise<string | undefined>, connections = true): void {
    if (!this.store) return;
    addSecretRoutes(app, {
      store: this.store,
      secretsOf: (server) => this.byServer.get(server)?.settings.secrets,
      linkTtlMs: this.config().credentials?.linkTtlMs ?? 600_000,
      authenticate,
      connections,
      log: this.log.child({ part: 'secrets' }),
    });
  }
}
