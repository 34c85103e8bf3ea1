// Per-caller values as the gateway runs them, for each perCaller server whose children take their caller's
// own: pasted secrets (SecretEnv, with the paste page) or an OAuth token (OAuthEnv, through the OAuth client
// and connect pages of src/credentials/), both over the one credential store.
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Log } from '../../infra/log.js';
import type { GatewayConfig, ServerConfig } from '../config/index.js';
import { addSecretRoutes, type CredentialStore, type GatewaySignIn, type OAuthClient } from '../credentials/index.js';
import { type CallerEnv, loadCallerLayers } from '../layers/index.js';

// Loaded with the credentials (src/gateway/credentials-loaded.ts), through src/layers/' loader: its face is
// loaded at start, these layers are not.
const { OAuthEnv, SecretEnv } = await loadCallerLayers();
type SecretEnv = InstanceType<typeof SecretEnv>;

export class PerCallerSecrets {
  private readonly byServer = new Map<string, SecretEnv>();

  constructor(
    private readonly config: () => GatewayConfig,
    private readonly store: CredentialStore | undefined,
    private readonly log: Log,
    /** The OAuth client of a perCaller server with credentials: (src/gateway/upstream-credentials.ts). */
    private readonly oauthClientOf?: (name: string, server: ServerConfig) => OAuthClient | undefined,
  ) {}

  /**
   * The source of a perCaller server's per-caller values (secrets or an OAuth token); undefined for any other server.
   */
  envFor(name: string, server: ServerConfig): CallerEnv | undefined {
    this.byServer.delete(name);
    const { credentials, listen } = this.config();
    if (server.transport !== 'stdio' || !server.perCaller || !this.store || !credentials || !listen.publicUrl)
      return undefined;
    if (server.credentials?.type === 'oauth' && server.credentials.env !== undefined) {
      const client = this.oauthClientOf?.(name, server);
      return client ? new OAuthEnv(client, this.store, server.credentials.env) : undefined;
    }
    if (!server.secrets) return undefined;
    const source = new SecretEnv(this.store, {
      server: name,
      secrets: server.secrets,
      publicUrl: listen.publicUrl,
      linkTtlMs: credentials.linkTtlMs,
    });
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
  addRoutes(
    app: Hono<{ Bindings: HttpBindings }>,
    authenticate: (authorization: string | undefined) => Promise<string | undefined>,
    connections = true,
    /** The sign-in the connect pages use (UpstreamCredentials.signIn): paste links go through it too. */
    signIn?: GatewaySignIn,
  ): void {
    if (!this.store) return;
    addSecretRoutes(app, {
      store: this.store,
      secretsOf: (server) => this.byServer.get(server)?.settings.secrets,
      linkTtlMs: this.config().credentials?.linkTtlMs ?? 600_000,
      authenticate,
      connections,
      publicUrl: this.config().listen.publicUrl,
      signIn,
      displayName: (server) => this.config().servers[server]?.title ?? server,
      log: this.log.child({ part: 'secrets' }),
    });
  }
}
