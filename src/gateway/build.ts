// Wires a validated config into running parts, in the order they depend on each other: the list cache,
// the servers (one supervised upstream each, with the cache in front), the aggregate, security, listen
// streams, the HTTP edge and its listener. Reload and close live in modules of their own.
import { randomBytes } from 'node:crypto';
import type { ListCache } from '../../cache/list-cache.js';
import { Aggregator } from '../aggregate/index.js';
import type { GatewayConfig } from '../config/index.js';
import {
  type CatalogView,
  createApp,
  type Edge,
  type EdgeOptions,
  hostChecker,
  RequestTracker,
} from '../edge/index.js';
import type { Log } from '../../infra/log.js';
import { createListenHub, type ListenHub } from '../notify/index.js';
import { GatewayMetrics, type LiveCounts } from '../ops/index.js';
import { HeldCallRetries } from '../mrtr/index.js';
import { ProfileSet } from '../profiles/index.js';
import { ToolSearch } from '../search/index.js';
import { isLoopbackHost } from '../../protocol/loopback.js';
import type { SecurityHolder } from './build-security.js';
import { createCache } from './cache.js';
import { closeGateway } from './close.js';
import { createSecurity } from './guard-wiring.js';
import { createLegacySessions, type LegacySessions } from './legacy-sessions.js';
import { defaultMaxConnections, readFdLimit, reportFdLimit } from './connection-cap.js';
import { trimHeapWhenIdle } from './idle-heap.js';
import { listen } from './listener.js';
import { opsOptions } from './ops-pages.js';
import { reloadGateway } from './reload.js';
import type { GatewayParts, LiveConfig, RunningGateway } from './running.js';
import { ServerSet } from './servers.js';
import { type GatewayCredentials, openCredentials } from './credentials.js';
import { TaskIdCodec } from '../tasks/index.js';
import { startTracing } from '../telemetry/index.js';
import { KEEPS_EXACT_NUMBERS } from '../../protocol/exact-json.js';

export async function startGateway(initial: GatewayConfig, log: Log): Promise<RunningGateway> {
  const config: LiveConfig = { current: initial, reloads: 0, appliedAt: Date.now() };
  // First, so a collector setting the gateway cannot use stops it before anything else starts.
  const tracer = await startTracing(initial.telemetry, process.env, log);
  const cache = await createCache(initial.cache, log.child({ part: 'cache' }));
  const retries = new HeldCallRetries(initial.mrtr, initial.cache, log);
  // Read at scrape only, once everything below exists.
  const live = (): LiveCounts => ({
    heldCalls: retries.held.calls.size,
    listenStreams: listenHub.size,
    cacheBytes: cache.bytes,
  });
  // Loaded only when the config uses them (credentials.ts): otherwise a stand-in that needs nothing.
  const credentials = await openCredentials(initial, log, () => config.current);
  const { servers, metrics } = await createServers(initial, cache, retries, live, log, credentials);
  warnIfOpenBeyondLoopback(initial, log);
  const aggregate = createAggregator(initial, servers, credentials, log);
  const search = createSearch(initial, servers, cache, log);
  const profiles = new ProfileSet();
  profiles.install(initial);
  const security = createSecurity(servers.prefixes, initial.aggregate.separator, aggregate, log);
  await security.install(initial);
  const listenHub = createListenHub(cache, {
    serverNames: () => servers.names(),
    resourceWatch: servers.resourceWatch,
    aggregate,
  });
  followConnections(credentials, aggregate, listenHub);
  const legacy = await createLegacySessions(initial, listenHub, log);
  const tracker = new RequestTracker();
  const ops = opsOptions({
    startedAt: Date.now(),
    config: () => config.current,
    live: config,
    servers,
    aggregate,
    cache,
    tracker,
    metrics,
    connections: credentials.counts && { needs: (server) => credentials.needs(server), counts: credentials.counts },
  });
  const edge = createEdge(initial, {
    servers,
    aggregate,
    catalog: catalogView(profiles, search),
    listenHub,
    security,
    tracker,
    metrics,
    legacy,
    retries,
    ops,
    tracer,
    log,
    credentials,
  });
  const { drain, url } = await listenOn(initial, edge, log).catch(async (error: Error) => {
    await abandonStart({ cache, security, retries, relay: legacy.relay, credentials, tracer, log });
    throw error;
  });
  await retries.register(url);
  announceEndpoints(initial, url, servers, log);
  credentials.announce();
  servers.startAll();
  // What start-up grew, given back once the gateway is idle (idle-heap.ts).
  const heapTrim = trimHeapWhenIdle(() => tracker.started);

  const parts: GatewayParts = {
    config,
    servers,
    aggregate,
    profiles,
    search,
    cache,
    listenHub,
    security,
    tracker,
    drain,
    retries,
    sessionRelay: legacy.relay,
    tracer,
    log,
  };
  return running(parts, url, () => {
    heapTrim.stop();
    return closeGateway(parts).finally(() => credentials.close());
  });
}

/** What the caller of startGateway holds: the URL, the parts tests and the CLI read, reload and close. */
function running(parts: GatewayParts, url: string, close: () => Promise<void>): RunningGateway {
  return {
    url,
    upstreams: parts.servers.upstreams,
    aggregate: parts.aggregate,
    cache: parts.cache,
    listen: parts.listenHub,
    security: parts.security,
    reload: (next) => reloadGateway(parts, next),
    close,
  };
}

/** /mcp's aggregate over every server. */
function createAggregator(
  initial: GatewayConfig,
  servers: ServerSet,
  credentials: GatewayCredentials,
  log: Log,
): Aggregator {
  return new Aggregator({
    upstreams: servers.upstreams,
    prefixes: servers.prefixes,
    separator: initial.aggregate.separator,
    listDeadlineMs: initial.aggregate.listDeadlineMs,
    cursorSecret: initial.aggregate.cursorSecret,
    log: log.child({ endpoint: 'mcp' }),
    connections: credentials,
    listsPerCaller: (server) => servers.listsPerCaller(server),
    whyNotOffered: (server, tool) => servers.whyNotOffered(server, tool),
  });
}

/** Search mode's catalog of every server's tools (its index is built at the first search). */
function createSearch(initial: GatewayConfig, servers: ServerSet, cache: ListCache, log: Log): ToolSearch {
  return new ToolSearch({
    upstreams: servers.upstreams,
    prefixes: servers.prefixes,
    separator: initial.aggregate.separator,
    changes: cache,
    waitMs: initial.aggregate.listDeadlineMs,
    log: log.child({ part: 'catalog' }),
  });
}

/** The listener: the edge on listen.host and port, its connections capped by the file descriptors there are. */
function listenOn(initial: GatewayConfig, edge: Edge, log: Log): ReturnType<typeof listen> {
  const { host, port, allowedHosts, publicUrl } = initial.listen;
  const fdLimit = readFdLimit();
  const maxConnections = initial.listen.maxConnections ?? defaultMaxConnections(fdLimit);
  reportFdLimit(fdLimit, maxConnections, initial.listen.maxConnections !== undefined, log);
  return listen(edge, host, port, hostChecker(host, allowedHosts, publicUrl), maxConnections);
}

/**
 * A start that could not listen closes what it opened (Redis clients, timers), so an embedder that catches
 * the error is not left holding connections; each close is best effort, the listen error is what matters.
 */
async function abandonStart(opened: {
  cache: ListCache;
  security: SecurityHolder;
  retries: HeldCallRetries;
  relay: GatewayParts['sessionRelay'];
  credentials: GatewayCredentials;
  tracer: GatewayParts['tracer'];
  log: Log;
}): Promise<void> {
  const closes: Array<() => unknown> = [
    () => opened.cache.close(),
    () => opened.security.close(),
    () => opened.retries.close(),
    () => opened.relay?.close(),
    () => opened.credentials.close(),
    () => opened.tracer?.shutdown(),
  ];
  for (const close of closes) {
    try {
      await close();
    } catch (error) {
      opened.log.debug({ err: (error as Error).message }, 'while closing after a failed start');
    }
  }
}

/** Every configured server, built but not started, and the metrics that count their load. */
async function createServers(
  config: GatewayConfig,
  cache: ListCache,
  retries: HeldCallRetries,
  live: () => LiveCounts,
  log: Log,
  credentials: GatewayCredentials,
): Promise<{ servers: ServerSet; metrics: GatewayMetrics }> {
  // Each reads the other only later (a queue wait, a scrape), so the order of these two does not matter.
  const servers: ServerSet = new ServerSet({
    cache,
    held: retries.held,
    queueWaited: (name, seconds) => metrics.queueWaited(name, seconds),
    meterOf: (name) => metrics.upstreamCalls.forServer(name),
    forgetMetrics: (name) => metrics.forgetServer(name),
    log,
    callerReachOf: (name, server) => credentials.reachOf(name, server),
  });
  const metrics = new GatewayMetrics({ upstreams: () => servers.statuses(), cache: () => cache.stats, live });
  for (const [name, server] of Object.entries(config.servers)) await servers.add(name, server, config.envReads);
  return { servers, metrics };
}

/**
 * A caller connected a server or revoked it (here or on another replica): merged pages holding their
 * placeholder, or that server's tools, are stale, and their own listen streams hear that its lists changed.
 */
function followConnections(credentials: GatewayCredentials, aggregate: Aggregator, listenHub: ListenHub): void {
  credentials.onConnectionChange((server, isFor) => {
    aggregate.listsChanged(isFor);
    listenHub.publish(server, CONNECTION_LISTS, isFor);
  });
}

/** The lists a connection made or revoked changes for its caller: every one the server has. */
const CONNECTION_LISTS = ['tools/list', 'prompts/list', 'resources/list'];

/** The edge's view of profiles and search mode: the profiles as of now, and the index search mode reads. */
function catalogView(profiles: ProfileSet, search: ToolSearch): CatalogView {
  return {
    get index() {
      return search.index;
    },
    warm: () => search.warm(),
    profile: (name) => profiles.profile(name),
    searchMode: () => profiles.searchMode(),
    profileNames: () => profiles.profileNames(),
  };
}

function warnIfOpenBeyondLoopback(config: GatewayConfig, log: Log): void {
  const { host } = config.listen;
  if (!isLoopbackHost(host) && config.auth?.anonymous) {
    log.warn(
      { host },
      'listening beyond loopback with auth.anonymous: true: anyone who can reach this address can use what the ' +
        'policies give "anonymous"',
    );
  }
}

interface EdgeParts {
  servers: ServerSet;
  aggregate: Aggregator;
  catalog: CatalogView;
  listenHub: ListenHub;
  security: SecurityHolder;
  tracker: RequestTracker;
  metrics: GatewayMetrics;
  legacy: LegacySessions;
  retries: HeldCallRetries;
  ops: EdgeOptions['ops'];
  tracer: EdgeOptions['tracer'];
  log: Log;
  credentials: GatewayCredentials;
}

function createEdge(config: GatewayConfig, parts: EdgeParts): Edge {
  const { security } = parts;
  return createApp({
    upstreams: parts.servers.upstreams,
    aggregate: parts.aggregate,
    catalog: parts.catalog,
    allowedOrigins: config.listen.allowedOrigins,
    maxBodyBytes: config.listen.maxBodyBytes,
    callerLimits: {
      maxRequests: config.listen.maxRequestsPerPrincipal,
      maxStreams: config.listen.maxStreamsPerPrincipal,
    },
    listen: parts.listenHub,
    contextKey: config.cache.contextSecret ? Buffer.from(config.cache.contextSecret) : randomBytes(32),
    security: () => security.current,
    tracker: parts.tracker,
    metrics: parts.metrics,
    legacyClients: parts.legacy.clients,
    ops: parts.ops,
    retries: parts.retries,
    tracer: parts.tracer,
    log: parts.log,
    tasks: new TaskIdCodec(config.mrtr.secret),
    addRoutes: (app) => {
      const authenticate = async (authorization: string | undefined) => {
        const outcome = await security.current.authenticator.authenticate(authorization);
        return outcome.ok && outcome.principal.via !== 'anonymous' ? outcome.principal.id : undefined;
      };
      parts.credentials.addRoutes(app, authenticate);
    },
  });
}

function announceEndpoints(config: GatewayConfig, url: string, servers: ServerSet, log: Log): void {
  if (config.auth && !config.auth.operators) {
    log.info(
      { pages: [`${url}/`, `${url}/status.json`, `${url}/metrics`] },
      'operator pages are closed to everyone: name who may read them in auth.operators (ids or groups), then reload',
    );
  }
  log.info({ endpoint: `${url}/mcp` }, `serving every server, aggregated`);
  if (config.search.enabled)
    log.info({ endpoint: `${url}/search/mcp` }, 'serving every server in search mode (search_tools, call_tool)');
  for (const name of Object.keys(config.profiles))
    log.info({ endpoint: `${url}/profiles/${name}/mcp` }, `serving profile ${name}`);
  for (const name of servers.names()) log.info({ endpoint: `${url}/servers/${name}/mcp` }, `serving ${name}`);
  if (!KEEPS_EXACT_NUMBERS) {
    log.warn(
      { node: process.versions.node },
      'this Node.js cannot pass numbers beyond double precision through unchanged (a 19-digit id or argument loses ' +
        'its last digits): run mcp-gateway on Node.js 22 or later',
    );
  }
}
