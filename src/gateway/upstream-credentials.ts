// Upstream identity as the gateway runs it: the store (when credentials: is configured), one credential
// source per server with credentials:, and the connect pages. Built once at start; sources are made
// again for servers a reload adds or changes (the store and the pages stay).
import type { Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { GatewayConfig, OAuthCredentials, ServerConfig } from '../config/index.js';
import type { Log } from '../../infra/log.js';
import {
  addConnectRoutes,
  ClientCredentialsSource,
  type CredentialSource,
  type CredentialStore,
  discoverIssuer,
  GatewaySignIn,
  OAuthClient,
  openCredentialStore,
  TokenExchanger,
} from '../credentials/index.js';

export class UpstreamCredentials {
  private readonly oauth = new Map<string, OAuthClient>();
  /** The sign-in before a connect or paste link goes on (with auth.jwt); made once, shared by both pages. */
  readonly signIn: GatewaySignIn | undefined;

  private constructor(
    private readonly config: GatewayConfig,
    readonly store: CredentialStore | undefined,
    private readonly log: Log,
    /** The config as last (re)loaded: what may change without a restart (a server's title) is read here. */
    private readonly current: () => GatewayConfig,
  ) {
    this.signIn = store ? signInFor(config, store) : undefined;
  }

  /** servers.<name>.title, else the name: what the pages call a server (a reload's title shown at once). */
  readonly displayName = (server: string): string => this.current().servers[server]?.title ?? server;

  /** Whether a caller must connect `server` (type: oauth) before its lists can be read for them. */
  needsConnect(server: string): boolean {
    return this.oauth.has(server);
  }

  /** Whether this principal has a token for `server` (one due for refresh counts: it is refreshed on use). */
  async connected(server: string, principal: string): Promise<boolean> {
    return (await this.store?.get(principal, server))?.kind === 'oauth';
  }

  /**
   * Told when a caller's connection to a server was made or revoked (not when a token was only refreshed),
   * here or on another replica: `isFor` says whose, by principal.
   */
  onConnectionChange(listener: (server: string, isFor: (principal: string) => boolean) => void): void {
    this.store?.onChange((server, change) => {
      if (!change.renewal) listener(server, change.isFor);
    });
  }

  /** `current`: the live config, read where a reload must show (start-up's `config` when not given). */
  static async open(config: GatewayConfig, log: Log, current = () => config): Promise<UpstreamCredentials> {
    const settings = config.credentials;
    const store = settings
      ? await openCredentialStore(settings, {
          url: config.cache.url,
          sentinel: config.cache.sentinel,
          keyPrefix: config.cache.keyPrefix,
        })
      : undefined;
    return new UpstreamCredentials(config, store, log, current);
  }

  /** The source of each caller's credential for one server; undefined: the server's static headers. */
  sourceFor(name: string, server: ServerConfig): CredentialSource | undefined {
    // Made again below when it still is one (a stdio server's client is not made here: left alone).
    if (server.transport !== 'stdio') this.oauth.delete(name);
    if (server.transport === 'stdio' || server.transport === 'sse' || !server.credentials) return undefined;
    if (server.transport === 'openapi') {
      // A REST API: the resource asked for is its base URL; with type oauth its issuer is the configured one,
      // as it sends no 401 to discover one from.
      const resource = server.credentials.resource ?? server.baseUrl;
      if (server.credentials.type === 'tokenExchange')
        return new TokenExchanger(name, server.credentials, resource ?? server.openapi);
      if (server.credentials.type === 'clientCredentials')
        return new ClientCredentialsSource({
          server: name,
          url: resource ?? server.openapi,
          settings: server.credentials,
        });
      return this.configuredIssuerClient(name, server.credentials, resource);
    }
    if (server.credentials.type === 'tokenExchange') return new TokenExchanger(name, server.credentials, server.url);
    if (server.credentials.type === 'clientCredentials')
      return new ClientCredentialsSource({ server: name, url: server.url, settings: server.credentials });
    const { store, config } = this;
    // The config's checks guarantee both for type oauth.
    if (!store || !config.credentials || !config.listen.publicUrl) return undefined;
    const client = new OAuthClient({
      server: name,
      url: server.url,
      settings: server.credentials,
      store,
      publicUrl: config.listen.publicUrl,
      linkTtlMs: config.credentials.linkTtlMs,
    });
    this.oauth.set(name, client);
    return client;
  }

  /**
   * The OAuth client of a perCaller stdio server whose children take each caller's token (credentials.env):
   * the same connect pages serve it, with the authorization server the config names.
   */
  childClientFor(name: string, server: ServerConfig): OAuthClient | undefined {
    if (server.transport !== 'stdio' || server.credentials?.type !== 'oauth') return undefined;
    return this.configuredIssuerClient(name, server.credentials, server.credentials.resource);
  }

  /**
   * A client whose authorization server is the config's `issuer` (a server that sends no 401 to discover it
   * from); `resource`: what the tokens are for (none: an issuer that binds none).
   */
  private configuredIssuerClient(
    name: string,
    settings: OAuthCredentials,
    resource: string | undefined,
  ): OAuthClient | undefined {
    const { store, config } = this;
    const { issuer } = settings;
    // The config's checks guarantee these for type oauth on a server with no 401 to discover from.
    if (!store || !config.credentials || !config.listen.publicUrl || issuer === undefined) return undefined;
    const client = new OAuthClient({
      server: name,
      url: resource ?? issuer,
      settings: { ...settings, resource },
      store,
      publicUrl: config.listen.publicUrl,
      linkTtlMs: config.credentials.linkTtlMs,
      discover: () => discoverIssuer(issuer, resource),
    });
    this.oauth.set(name, client);
    return client;
  }

  /** The connect pages and the callers' own list of connections (only with a store). */
  addRoutes(
    app: Hono<{ Bindings: HttpBindings }>,
    authenticate: (authorization: string | undefined) => Promise<string | undefined>,
  ): void {
    if (!this.store) return;
    addConnectRoutes(app, {
      store: this.store,
      clients: () => this.oauth,
      authenticate,
      publicUrl: this.config.listen.publicUrl,
      signIn: this.signIn,
      displayName: this.displayName,
      linkTtlMs: this.config.credentials?.linkTtlMs ?? 600_000,
      log: this.log.child({ part: 'credentials' }),
    });
  }

  async close(): Promise<void> {
    await this.store?.close();
  }
}

/** With auth.jwt, the person opening a connect link signs in at its issuer first (oauth/sign-in.ts). */
function signInFor(config: GatewayConfig, store: CredentialStore): GatewaySignIn | undefined {
  const jwt = config.auth?.jwt;
  if (!jwt || !config.credentials || !config.listen.publicUrl) return undefined;
  const { scopes, ...client } = config.credentials.signIn;
  return new GatewaySignIn(
    {
      issuer: jwt.issuer,
      principalClaim: jwt.principalClaim,
      client,
      scopes,
      publicUrl: config.listen.publicUrl,
      linkTtlMs: config.credentials.linkTtlMs,
    },
    store,
  );
}
