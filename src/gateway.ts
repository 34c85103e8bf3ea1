// Wires a validated config into running parts: one supervised upstream per server with the list cache in
// front, the aggregate, list-change notifications from upstreams to cache to listen streams, the HTTP
// edge, and an orderly shutdown of all of it.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { getRequestListener } from '@hono/node-server';
import type { Upstream } from '../bridge/upstream.js';
import { ListCache } from '../cache/list-cache.js';
import { MemoryStore } from '../cache/memory-store.js';
import type { CacheStore } from '../cache/store.js';
import { TieredStore } from '../cache/tiered-store.js';
import type { GatewayConfig, ServerConfig } from './config.js';
import { Aggregator } from './aggregate/aggregator.js';
import { CachedUpstream } from './cached-upstream.js';
import { createApp, type Edge } from './edge/app.js';
import { writeJson } from './edge/exchange.js';
import { hostChecker, type HostCheck } from './edge/host-check.js';
import { HttpDrain } from './edge/http-drain.js';
import { screenRequest } from './edge/screen.js';
import { RequestTracker } from './edge/request-tracker.js';
import { LegacyClients } from './legacy-client/legacy-clients.js';
import { LimitedUpstream } from './limits/limited-upstream.js';
import { GatewayMetrics } from './ops/metrics.js';
import { renderStatusPage, type StatusSnapshot } from './ops/status-page.js';
import { changedLists } from './notify/changed-lists.js';
import { ListenHub } from './notify/listen-hub.js';
import { ResourceWatch } from './notify/resource-watch.js';
import { watchModernUpstream, type ModernWatch } from './notify/upstream-listen.js';
import type { Log } from './infra/log.js';
import { isLoopbackHost } from './protocol/loopback.js';
import { cancelWaitingCalls, InputBridge, type HeldCalls } from './mrtr/input-bridge.js';
import type { InstanceRegistry } from './mrtr/instance-registry.js';
import { PeerTrust } from './mrtr/peer-trust.js';
import { peerChecker } from './mrtr/peers.js';
import type { SessionRelay } from './legacy-client/session-relay.js';
import { RequestStateCodec } from './mrtr/request-state.js';
import { SecurityHolder } from './security.js';
import { createUpstream } from './upstream-factory.js';
import { GATEWAY_INFO } from './infra/version.js';


const EVERY_LIST = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read', 'server/discover'];

export interface RunningGateway {
  /** Base URL, for example http://127.0.0.1:8080 */
  url: string;
  upstreams: ReadonlyMap<string, Upstream>;
  aggregate: Aggregator;
  cache: ListCache;
  listen: ListenHub;
  security: SecurityHolder;
  /**
   * Applies a new config's authentication, policies, rate limits and audit settings. Throws, keeping the
   * old ones, when they cannot be built. Returns the sections that changed but need a restart.
   */
  reload(next: GatewayConfig): Promise<string[]>;
  close(): Promise<void>;
}

export async function startGateway(initial: GatewayConfig, log: Log): Promise<RunningGateway> {
  let config = initial;
  const cache = await createCache(config.cache, log.child({ part: 'cache' }));
  const raw = new Map<string, Upstream>();
  const modernWatches = new Map<string, ModernWatch>();
  const resourceWatch = new ResourceWatch(raw, modernWatches, log.child({ part: 'resources' }));
  let aggregate: Aggregator | undefined;
  const listenHub = new ListenHub({
    owner: (uri, endpoint) => endpoint ?? aggregate?.ownerOf(uri),
    add: (upstream, uri) => resourceWatch.add(upstream, uri),
    remove: (upstream, uri) => resourceWatch.remove(upstream, uri),
  });
  // A change anywhere (here, or on another replica sharing Redis) reaches this replica's listen streams.
  // resources/read changed: the URIs named, or (a resync, nothing named) every URI a client subscribes to.
  const announce = (upstream: string, lists: readonly string[], changed?: readonly string[]): void => {
    aggregate?.listsChanged();
    listenHub.publish(upstream, lists);
    if (!lists.includes('resources/read')) return;
    for (const uri of changed ?? resourceWatch.urisOf(upstream)) listenHub.publishResourceUpdated(upstream, uri);
  };
  cache.onInvalidate(announce);
  // Redis's invalidation channel was away: other replicas' changes were missed, for any upstream.
  cache.onMissedChanges(() => {
    for (const name of raw.keys()) announce(name, EVERY_LIST);
  });

  const mrtrSecret = config.mrtr.secret ? Buffer.from(config.mrtr.secret) : randomBytes(32);
  const trust = new PeerTrust(mrtrSecret);
  const peerAllowed = peerChecker(config.mrtr.peers);
  const held: HeldCalls = {
    codec: new RequestStateCodec(mrtrSecret, randomBytes(6).toString('base64url')),
    calls: new Map(),
    holdMs: config.mrtr.holdMs,
    shared: config.cache.store === 'redis',
  };
  const upstreams = new Map<string, CachedUpstream>();
  /** Each server's limits (maxInFlight, maxQueued, queueTimeoutMs), for metrics and /readyz. */
  const limited = new Map<string, LimitedUpstream>();
  const prefixes = new Map<string, string>();
  /** The config each running server was started from. */
  const running = new Map<string, ServerConfig>();

  /** Starts serving one server: its upstream, wrappers, notifications and watches. Cold path. */
  async function addServer(name: string, server: ServerConfig, envReads: readonly string[]): Promise<CachedUpstream> {
    const upstreamLog = log.child({ server: name });
    const upstream = await createUpstream(name, server, upstreamLog, envReads);
    raw.set(name, upstream);
    upstream.events.on('listChanged', (notification: { method: string; params?: { uri?: unknown } }) => {
      const lists = changedLists(notification.method);
      const uri = notification.params?.uri;
      // Through the cache, so the URI reaches other replicas' listen streams too (announce, above).
      const changed = notification.method === 'notifications/resources/updated' && typeof uri === 'string' ? [uri] : undefined;
      if (lists.length) void cache.invalidate(name, lists, changed);
    });
    // A restarted upstream, or a listen stream opened again, may have changed while unobserved. (Not on
    // the first start: entries other replicas filled for this server are still good.)
    const resync = (): void => void cache.invalidate(name, EVERY_LIST);
    let readyBefore = false;
    upstream.events.on('state', (state: string) => {
      if (state !== 'ready') return;
      if (readyBefore) resync();
      readyBefore = true;
      resourceWatch.upstreamReady(name);
    });
    modernWatches.set(name, watchModernUpstream(upstream, upstreamLog, resync, () => resourceWatch.urisOf(name)));
    // Limits right on the server's upstream, below the cache and the MRTR bridge (docs/design.md: Overload).
    const limits = new LimitedUpstream(upstream, server, (seconds) => metrics.queueWaited(name, seconds));
    limited.set(name, limits);
    const served = new CachedUpstream(new InputBridge(limits, { held, roots: server.roots, log: upstreamLog }), cache);
    upstreams.set(name, served);
    prefixes.set(name, server.prefix ?? name);
    running.set(name, server);
    return served;
  }

  /** Stops serving one server: new requests no longer find it; those in flight finish (up to drainMs). */
  async function retire(name: string, served: CachedUpstream, watch: ModernWatch | undefined, drainMs: number): Promise<void> {
    watch?.stop();
    if (!(await served.drained(drainMs))) log.warn({ server: name, drainMs }, 'requests to a replaced or removed server still in flight after listen.drainMs; cutting them off');
    await served.close();
  }

  const metrics = new GatewayMetrics({
    upstreams: () => [...upstreams].map(([name, upstream]) => ({ name, ...upstream.status(), load: limited.get(name)?.load() })),
    cache: () => cache.stats,
  });
  for (const [name, server] of Object.entries(config.servers)) await addServer(name, server, config.envReads);

  const { host, port } = config.listen;
  if (!isLoopbackHost(host) && config.auth?.anonymous) {
    log.warn({ host }, 'listening beyond loopback with auth.anonymous: true: anyone who can reach this address can use what the policies give "anonymous"');
  }
  aggregate = new Aggregator({
    upstreams,
    prefixes,
    separator: config.aggregate.separator,
    listDeadlineMs: config.aggregate.listDeadlineMs,
    cursorSecret: config.aggregate.cursorSecret,
    log: log.child({ endpoint: 'mcp' }),
  });
  const security = new SecurityHolder(
    {
      prefixes,
      separator: config.aggregate.separator,
      ownerOf: (uri) => aggregate!.ownerOf(uri),
    },
    log.child({ part: 'security' }),
  );
  await security.install(config);
  let registry: InstanceRegistry | undefined;
  const sessionSecret = config.legacyClients.sessionSecret ? Buffer.from(config.legacyClients.sessionSecret) : randomBytes(32);
  const legacyLog = log.child({ part: 'legacy-clients' });
  // With Redis and a shared session secret, a 2025 session's stream, subscriptions and answers travel between
  // replicas: no stickiness needed. Without the secret no other replica can open this one's session ids, so
  // the relay's two connections would serve nothing.
  let sessionRelay: SessionRelay | undefined;
  if (config.cache.store === 'redis' && config.legacyClients.sessionSecret) {
    const { SessionRelay } = await import('./legacy-client/session-relay.js');
    sessionRelay = new SessionRelay({ url: config.cache.url, sentinel: config.cache.sentinel, keyPrefix: config.cache.keyPrefix, secret: sessionSecret, log: legacyLog });
  } else if (config.cache.store === 'redis') {
    legacyLog.info(
      {},
      "2025 clients' sessions stay on the replica that opened them: without legacyClients.sessionSecret each replica has its own random key. " +
        'Set the same legacyClients.sessionSecret on every replica to share them through Redis, or send each 2025 client to one replica (sticky sessions)',
    );
  }
  const tracker = new RequestTracker();
  const startedAt = Date.now();
  const app = createApp({
    upstreams,
    aggregate,
    allowedOrigins: config.listen.allowedOrigins,
    maxBodyBytes: config.listen.maxBodyBytes,
    listen: listenHub,
    contextKey: config.cache.contextSecret ? Buffer.from(config.cache.contextSecret) : randomBytes(32),
    security: () => security.current,
    tracker,
    metrics,
    legacyClients: new LegacyClients({ secret: sessionSecret, sessionTtlMs: config.legacyClients.sessionTtlMs, listen: listenHub, relay: sessionRelay, log: legacyLog }),
    ops: {
      startedAt,
      operators: () => config.auth?.operators, // read per request: a reload may change it
      metrics,
      page: (snapshot) => renderStatusPage(snapshot as StatusSnapshot),
      upstreams: () => [...upstreams].map(([name, upstream]) => ({ name, required: config.servers[name]!.required, status: upstream.status(), saturated: limited.get(name)?.load().saturated })),
      snapshot: async (): Promise<StatusSnapshot> => {
        const tools = await aggregate!.toolCounts();
        const stats = cache.stats;
        const lookups = stats.hits + stats.misses;
        return {
          version: GATEWAY_INFO.version,
          startedAt: new Date(startedAt).toISOString(),
          uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
          upstreams: [...upstreams].map(([name, upstream]) => {
            const status = upstream.status();
            return { name, transport: config.servers[name]!.transport, era: status.era, state: status.state, restarts: status.restarts, toolCount: tools.get(name), lastError: status.lastError };
          }),
          cache: { hits: stats.hits, misses: stats.misses, hitRate: lookups ? stats.hits / lookups : undefined },
          recentDenials: tracker.recentDenials(),
        };
      },
    },
    retries: {
      instance: held.codec.instance,
      holderOf: (token) => {
        const opened = held.codec.open(token);
        return opened.ok && opened.state.instance !== held.codec.instance ? opened.state.instance : undefined;
      },
      lookup: async (instance) => {
        const found = await registry?.lookup(instance);
        if (found === undefined || peerAllowed(found)) return found;
        log.warn({ instance, url: found }, 'not forwarding a retry to an address mrtr.peers does not allow (by default: loopback and private addresses)');
        return undefined;
      },
      trust,
    },
    log,
  });
  const { server, drain } = await listen(app, host, port, hostChecker(host, config.listen.allowedHosts));
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  // With Redis, replicas find each other: a retry landing on the wrong one is forwarded to its call's holder.
  if (config.cache.store === 'redis') {
    const { InstanceRegistry } = await import('./mrtr/instance-registry.js');
    registry = await InstanceRegistry.create({
      url: config.cache.url,
      sentinel: config.cache.sentinel,
      keyPrefix: config.cache.keyPrefix,
      instance: held.codec.instance,
      internalUrl: config.mrtr.internalUrl ?? url,
      trust,
      log: log.child({ part: 'instances' }),
    });
  }
  if (config.auth && !config.auth.operators) {
    log.info({ pages: [`${url}/`, `${url}/status.json`, `${url}/metrics`] }, 'operator pages are closed to everyone: name who may read them in auth.operators (ids or groups), then reload');
  }
  log.info({ endpoint: `${url}/mcp` }, `serving every server, aggregated`);
  for (const name of upstreams.keys()) log.info({ endpoint: `${url}/servers/${name}/mcp` }, `serving ${name}`);

  // Children start in the background; requests wait for them (up to their timeout).
  for (const upstream of upstreams.values()) void upstream.start();

  return {
    url,
    upstreams,
    aggregate,
    cache,
    listen: listenHub,
    security,
    async reload(next) {
      const needRestart = (['listen', 'log', 'aggregate', 'cache', 'mrtr', 'legacyClients'] as const).filter((key) => JSON.stringify(next[key]) !== JSON.stringify(config[key]));
      // Only servers whose settings changed restart; the others keep serving, untouched.
      const added: string[] = [];
      const changed: [string, CachedUpstream][] = [];
      const removed: [string, CachedUpstream][] = [];
      for (const [name, server] of Object.entries(next.servers)) {
        const before = running.get(name);
        if (before && JSON.stringify(before) === JSON.stringify(server)) continue;
        const old = upstreams.get(name);
        if (old) changed.push([name, old]);
        else added.push(name);
      }
      for (const [name, served] of upstreams) if (!(name in next.servers)) removed.push([name, served]);
      // May throw (a key file that cannot be read): then nothing has changed yet.
      await security.install(next);
      // The watches of servers about to be replaced or removed, taken before new ones take their place.
      const oldWatches = new Map([...removed, ...changed].map(([name]) => [name, modernWatches.get(name)] as const));
      for (const [name] of removed) {
        modernWatches.delete(name);
        upstreams.delete(name);
        prefixes.delete(name);
        running.delete(name);
        raw.delete(name);
        limited.delete(name);
        aggregate!.detach(name);
      }
      for (const name of [...added, ...changed.map(([n]) => n)]) {
        const served = await addServer(name, next.servers[name]!, next.envReads);
        aggregate!.attach(name, served);
        void served.start();
      }
      // Keep config order: merged lists follow it.
      const order = Object.keys(next.servers);
      const entries = order.map((name) => [name, upstreams.get(name)!] as const);
      upstreams.clear();
      for (const [name, served] of entries) upstreams.set(name, served);
      for (const name of [...removed.map(([n]) => n), ...changed.map(([n]) => n)]) void cache.invalidate(name, EVERY_LIST);
      aggregate!.listsChanged();
      for (const [name, served] of [...removed, ...changed]) void retire(name, served, oldWatches.get(name), config.listen.drainMs);
      // Listen streams were opened under the old servers and rules: end them, and clients listen again under the new.
      const securityChanged = (['auth', 'policies', 'rateLimit'] as const).some((key) => JSON.stringify(next[key]) !== JSON.stringify(config[key]));
      if (securityChanged || removed.length || changed.length) listenHub.closeAll();
      if (added.length || changed.length || removed.length) {
        log.info({ added, changed: changed.map(([n]) => n), removed: removed.map(([n]) => n) }, 'servers reloaded');
      }
      // Sections that need a restart keep their running values (and are reported again on the next reload).
      config = { ...next, listen: config.listen, log: config.log, aggregate: config.aggregate, cache: config.cache, mrtr: config.mrtr, legacyClients: config.legacyClients };
      return needRestart;
    },
    async close() {
      // Drain. First /readyz says "draining" while everything is still served, for listen.drainDelayMs, so a
      // load balancer's health check takes this replica out before it stops listening.
      tracker.draining = true;
      if (config.listen.drainDelayMs > 0) {
        log.info({ drainDelayMs: config.listen.drainDelayMs }, 'draining: /readyz answers 503 while requests are still served');
        await delay(config.listen.drainDelayMs);
      }
      // Then no new connections; idle ones close, busy ones after their answer; listen streams end (clients
      // open them again elsewhere); requests in flight finish (up to listen.drainMs), then what is left is cut.
      listenHub.closeAll();
      for (const watch of modernWatches.values()) watch.stop();
      const closed = drain.close();
      // No retry can reach this replica now: its held calls that wait for one end here, and other replicas
      // stop offering it retries (they answer that the holder is gone; the client starts the call again).
      const abandoned = cancelWaitingCalls(held);
      if (abandoned > 0) log.info({ calls: abandoned }, 'draining: cancelled the calls held for a client retry that can no longer reach this replica');
      await registry?.forget();
      if (!(await tracker.whenIdle(config.listen.drainMs))) {
        log.warn({ inFlight: tracker.inFlight, drainMs: config.listen.drainMs }, 'requests still in flight after listen.drainMs; cutting them off');
      }
      drain.cut();
      await closed;
      await Promise.all([...upstreams.values()].map((u) => u.close()));
      await cache.close();
      await security.close();
      registry?.close();
      await sessionRelay?.close();
    },
  };
}

async function createCache(settings: GatewayConfig['cache'], log: Log): Promise<ListCache> {
  const memory = new MemoryStore({ maxEntries: settings.maxEntries, maxBytes: settings.maxBytes });
  // With Redis, memory stays in front: shared entries are read once per replica, and a Redis outage
  // still leaves this replica what it holds.
  let store: CacheStore = memory;
  if (settings.store === 'redis') {
    // Loaded only when configured: a gateway without Redis does not carry ioredis in memory.
    const { RedisStore } = await import('../cache/redis-store.js');
    store = new TieredStore(memory, new RedisStore({ url: settings.url, sentinel: settings.sentinel, keyPrefix: settings.keyPrefix, log }));
  }
  return new ListCache(store, { minTtlMs: settings.minTtlMs, maxTtlMs: settings.maxTtlMs, log });
}

function listen(edge: Edge, hostname: string, port: number, hostAllowed: HostCheck | undefined): Promise<{ server: Server; drain: HttpDrain }> {
  // HTTP/1.0 allows a request without Host, and load balancers' health checks send them (HAProxy's classic
  // `option httpchk GET /readyz`). Node serves them; Hono needs a host to build a URL (nothing reads it) and
  // would answer 400, so it gets a placeholder. Checks on the Host header still see none.
  const viaHono = getRequestListener(edge.app.fetch, { hostname: 'localhost' });
  return new Promise((resolve, reject) => {
    const server = createServer((incoming, outgoing) => {
      drain.track(outgoing);
      const refusal = screenRequest(incoming, hostAllowed);
      if (refusal) {
        writeJson(outgoing, refusal.status, refusal.body, { connection: 'close' });
        return;
      }
      if (edge.serveMcpPost(incoming, outgoing) === undefined) void viaHono(incoming, outgoing);
    });
    const drain = new HttpDrain(server);
    server.listen(port, hostname, () => resolve({ server, drain }));
    // Longer than the idle timeouts of common load balancers (60 s), so they, not the gateway, close idle
    // connections, and a reused connection is not cut as a request arrives on it.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE'
        ? new Error(`port ${port} on ${hostname} is in use; pick another with --port or listen.port`)
        : error);
    });
  });
}
