// What the wiring knows of per-user credentials, loaded or not (credentials.ts decides which): its own file, so
// that the module loaded only when the config uses them (credentials-loaded.ts) and the one that loads it share
// these types without importing each other.
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { CallerConnections } from '../aggregate/index.js';
import type { ServerConfig } from '../config/index.js';
import type { CallerLayers, ChildEnvSource } from '../layers/index.js';

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
