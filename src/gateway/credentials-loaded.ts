// Per-user credentials as a gateway that uses them runs them (loaded by credentials.ts only then): the
// upstream credentials (store, OAuth clients, token exchange, connect pages), the per-caller values (paste
// pages) and the two stack layers that reach a server as each caller.
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Log } from '../../infra/log.js';
import type { GatewayConfig, ServerConfig } from '../config/index.js';
import { loadCallerLayers } from '../layers/index.js';
import { announceCredentials } from './credential-notes.js';
import type { Authenticate, CallerReach, GatewayCredentials } from './credentials-face.js';
import { PerCallerSecrets } from './per-caller-secrets.js';
import { UpstreamCredentials } from './upstream-credentials.js';

// The two layers, from src/layers/' loader: its face is loaded at start, and they are not (this module is
// loaded only when the config uses credentials or per-caller secrets, src/gateway/credentials.ts).
const { CredentialedUpstream, SecretGate } = await loadCallerLayers();

export class LoadedCredentials implements GatewayCredentials {
  readonly counts: GatewayCredentials['counts'];

  private constructor(
    private readonly config: GatewayConfig,
    private readonly log: Log,
    private readonly credentials: UpstreamCredentials,
    private readonly secrets: PerCallerSecrets,
  ) {
    const store = credentials.store;
    this.counts = store && (() => store.counts());
  }

  static async open(config: GatewayConfig, log: Log, current: () => GatewayConfig): Promise<LoadedCredentials> {
    const credentials = await UpstreamCredentials.open(config, log, current);
    const secrets = new PerCallerSecrets(current, credentials.store, log, (name, server) =>
      credentials.childClientFor(name, server),
    );
    return new LoadedCredentials(config, log, credentials, secrets);
  }

  async reachOf(name: string, server: ServerConfig): Promise<CallerReach | undefined> {
    // In this order: a perCaller server's OAuth client is made by envFor, and sourceFor leaves it be.
    const env = this.secrets.envFor(name, server);
    const source = this.credentials.sourceFor(name, server);
    if (!env && !source) return undefined;
    return {
      env,
      credentials: source && ((below) => new CredentialedUpstream(below, source)),
      secrets: env && ((below) => new SecretGate(below, env)),
    };
  }

  needs(server: string): 'account' | 'secrets' | undefined {
    return this.credentials.needsConnect(server)
      ? 'account'
      : this.secrets.needsConnect(server)
        ? 'secrets'
        : undefined;
  }

  connected(server: string, principal: string): Promise<boolean> {
    return this.credentials.needsConnect(server)
      ? this.credentials.connected(server, principal)
      : this.secrets.connected(server, principal);
  }

  onConnectionChange(listener: (server: string, isFor: (principal: string) => boolean) => void): void {
    this.credentials.onConnectionChange(listener);
  }

  addRoutes(app: Hono<{ Bindings: HttpBindings }>, authenticate: Authenticate): void {
    // One store, one list of a caller's connections: the connect routes serve it; the paste pages add none.
    this.credentials.addRoutes(app, authenticate);
    this.secrets.addRoutes(app, authenticate, false, this.credentials.signIn);
  }

  announce(): void {
    announceCredentials(this.config, this.log);
  }

  close(): Promise<void> {
    return this.credentials.close();
  }
}
