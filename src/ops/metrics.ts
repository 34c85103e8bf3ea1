// Prometheus metrics for one gateway: request counts, latency, in-flight, upstream state and cache counters.
// Each GatewayMetrics owns its own Registry (never prom-client's global one): tests start many gateways in
// one process, and a second registration of a name in one registry throws.
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { sandboxRefusals } from '../../bridge/sandbox/index.js';
import { HotCounter, HotHistogram, type CounterChild, type HistogramChild } from './hot-metrics.js';
import { dropSeries } from './drop-series.js';
import { addChildMetrics, type ChildSnapshot } from './child-metrics.js';
import { addLoadMetrics, type UpstreamLoad } from './load-metrics.js';
import { OPENMETRICS_CONTENT_TYPE, renderOpenMetrics } from './open-metrics.js';
import { counterAtScrape, gaugeAtScrape } from './scraped.js';
import { UpstreamMetrics } from './upstream-metrics.js';
import { DURATION_BUCKETS, methodLabel } from './metric-labels.js';

/** Re-exported: the label is part of what this module's metrics mean. */
export { methodLabel } from './metric-labels.js';

const PREFIX = 'mcp_gateway_';

/** How one request ended, as `requests_total{outcome}` records it. */
export type RequestOutcome =
  | 'ok' // answered with a result
  | 'error' // answered with a JSON-RPC error
  | 'rejected' // refused at the HTTP level (4xx) before reaching the upstream
  | 'unauthenticated'
  | 'denied'
  | 'rate_limited'
  | 'cancelled';

export const REQUEST_OUTCOMES: readonly RequestOutcome[] = [
  'ok',
  'error',
  'rejected',
  'unauthenticated',
  'denied',
  'rate_limited',
  'cancelled',
];

/** The fixed set `upstream_state` reports for every upstream (1 for the current one, 0 for the others). */
export const UPSTREAM_STATES: readonly string[] = ['starting', 'ready', 'backing-off', 'unhealthy', 'stopped'];

export interface UpstreamSnapshot {
  name: string;
  state: string;
  era: string | undefined;
  restarts: number;
  /** In flight, queued and refused, for upstreams with limits. */
  load?: UpstreamLoad;
  /** Each child of a pooled server (instances > 1). */
  children?: readonly ChildSnapshot[];
}

export interface CacheSnapshot {
  hits: number;
  misses: number;
  invalidations: number;
  fetches: number;
  storeErrors: number;
}

/** What is open or held right now, read at scrape. */
export interface LiveCounts {
  /** 2025-era calls held for a client's answer (MRTR). */
  heldCalls: number;
  /** subscriptions/listen streams open (modern clients and 2025 sessions). */
  listenStreams: number;
  /** Bytes of this replica's in-memory cache store. */
  cacheBytes: number;
}

export interface GatewayMetricsOptions {
  /** Read at every scrape. */
  upstreams: () => Iterable<UpstreamSnapshot>;
  /** Read at every scrape; the numbers are running totals. */
  cache: () => CacheSnapshot;
  /** Read at every scrape. */
  live?: () => LiveCounts;
  /** Node's process metrics (`process_*`, `nodejs_*`, unprefixed as usual). Default true. */
  processMetrics?: boolean;
}

interface FinishedChildren {
  method: string;
  outcomes: Partial<Record<RequestOutcome, CounterChild>>;
  duration: HistogramChild;
}

export class GatewayMetrics {
  readonly registry: Registry;
  readonly contentType: string;
  readonly openMetricsContentType = OPENMETRICS_CONTENT_TYPE;
  /** Per-upstream duration, errors and tool calls, recorded by each server's MeteredUpstream. */
  readonly upstreamCalls: UpstreamMetrics;

  private readonly requests: HotCounter;
  private readonly duration: HotHistogram;
  /** The children of requests and duration, bound once per endpoint and method label. */
  private readonly finished = new Map<string, Map<string, FinishedChildren>>();
  /** Requests counted in and not yet out: a plain number per call, read into the gauge at scrape time. */
  private inFlight = 0;
  private readonly denials: Counter<'endpoint' | 'method'>;
  private readonly rateLimits: Counter<'endpoint'>;
  /** Made on the first guardrail decision: a gateway without guardrails shows no such metric. */
  private guardrailDecisions: Counter<'rule' | 'action' | 'stage'> | undefined;
  private guardrailWebhooks: Counter<'rule' | 'webhook' | 'outcome'> | undefined;
  /** Records how long a request that had to queue waited for its slot on `server`. */
  readonly queueWaited: (server: string, seconds: number) => void;
  private readonly forgetLoad: (server: string) => Promise<void>;

  constructor(options: GatewayMetricsOptions) {
    const register = new Registry();
    this.registry = register;
    this.contentType = register.contentType;
    if (options.processMetrics !== false) collectDefaultMetrics({ register });
    const registers = [register];

    this.requests = new HotCounter(register, {
      name: `${PREFIX}requests_total`,
      help: 'Requests by endpoint ("mcp" or a server name), JSON-RPC method and outcome.',
      labelNames: ['endpoint', 'method', 'outcome'],
    });
    this.duration = new HotHistogram(register, {
      name: `${PREFIX}request_duration_seconds`,
      help: 'Time from receiving a request to finishing its answer, by endpoint and method.',
      labelNames: ['endpoint', 'method'],
      buckets: DURATION_BUCKETS,
    });
    // Read at scrape time: prom-client's inc and dec hash a label object on every call, twice per request.
    gaugeAtScrape(register, {
      name: `${PREFIX}requests_in_flight`,
      help: 'Requests received and not yet answered.',
      fill: (record) => record({}, this.inFlight),
    });
    this.denials = new Counter({
      name: `${PREFIX}policy_denials_total`,
      help: 'Requests the policy refused, by endpoint and method.',
      labelNames: ['endpoint', 'method'],
      registers,
    });
    this.rateLimits = new Counter({
      name: `${PREFIX}rate_limited_total`,
      help: 'Requests refused by the rate limiter, by endpoint.',
      labelNames: ['endpoint'],
      registers,
    });

    this.upstreamCalls = new UpstreamMetrics(register);

    // Scrape-time metrics (scraped.ts).
    const { upstreams, cache, live } = options;
    const load = addLoadMetrics(register, upstreams);
    this.queueWaited = load.queueWaited;
    this.forgetLoad = load.forget;
    if (live) addLiveMetrics(register, live);
    addUpstreamMetrics(register, upstreams);

    addChildMetrics(register, upstreams, UPSTREAM_STATES);
    counterAtScrape(register, {
      name: `${PREFIX}sandbox_refused_total`,
      help:
        'What sandboxed children were refused, by server and kind (host: a host not on network.allow; syscall: a ' +
        'child ended by the seccomp filter; cpu: a child ended at its cpuSeconds).',
      labelNames: ['server', 'kind'],
      fill(record) {
        for (const [server, kinds] of sandboxRefusals)
          for (const [kind, count] of kinds) record({ server, kind }, count);
      },
    });

    addCacheMetrics(register, cache);
  }

  /** A request was received. Pair every call with one requestFinished. */
  requestStarted(): void {
    this.inFlight++;
  }

  /**
   * A request that requestStarted counted has ended. `endpoint` must come from the configuration ("mcp" or a
   * server name), never from the request path as typed; `method` is reduced by methodLabel.
   */
  requestFinished(endpoint: string, method: string | undefined, outcome: RequestOutcome, seconds: number): void {
    this.inFlight--;
    const children = this.finishedChildren(endpoint, methodLabel(method));
    children.outcomes[outcome] ??= this.requests.labels(endpoint, children.method, outcome);
    children.outcomes[outcome].inc();
    children.duration.observe(seconds);
  }

  private finishedChildren(endpoint: string, method: string): FinishedChildren {
    let byMethod = this.finished.get(endpoint);
    if (!byMethod) this.finished.set(endpoint, (byMethod = new Map()));
    let children = byMethod.get(method);
    if (!children)
      byMethod.set(method, (children = { method, outcomes: {}, duration: this.duration.labels(endpoint, method) }));
    return children;
  }

  /** The policy refused a request (independent of requestFinished's outcome). */
  denied(endpoint: string, method: string | undefined): void {
    this.denials.inc({ endpoint, method: methodLabel(method) });
  }
  /** A guardrail found something (docs/guardrails.md): counted by rule, what it did, and where it looked. */
  guardrailDecision(rule: string, action: string, stage: string): void {
    this.guardrailDecisions ??= new Counter({
      name: `${PREFIX}guardrail_decisions_total`,
      help: 'Content a guardrail rule found, by rule, action taken (redact, block, log) and stage.',
      labelNames: ['rule', 'action', 'stage'],
      registers: [this.registry],
    });
    this.guardrailDecisions.inc({ rule, action, stage });
  }
  /** A guardrail's webhook was asked (docs/guardrails.md): allow, redact, block, timeout, unreachable, malformed. */
  guardrailWebhook(rule: string, webhook: string, outcome: string): void {
    this.guardrailWebhooks ??= new Counter({
      name: `${PREFIX}guardrail_webhook_calls_total`,
      help: "Calls to a guardrail's webhook detector, by rule, webhook name and outcome.",
      labelNames: ['rule', 'webhook', 'outcome'],
      registers: [this.registry],
    });
    this.guardrailWebhooks.inc({ rule, webhook, outcome });
  }

  /** The rate limiter refused a request (independent of requestFinished's outcome). */
  rateLimited(endpoint: string): void {
    this.rateLimits.inc({ endpoint });
  }

  /**
   * Drops every series of a server a reload removed, once it has stopped: its upstream calls, queue waits,
   * and the requests its /servers/<name>/mcp endpoint counted. ("mcp" also names /mcp, whose series stay.)
   */
  async forgetServer(server: string): Promise<void> {
    if (server !== 'mcp') {
      this.finished.delete(server);
      this.requests.remove({ endpoint: server });
      this.duration.remove({ endpoint: server });
    }
    const endpoint =
      server === 'mcp' ? [] : [this.denials, this.rateLimits].map((metric) => dropSeries(metric, 'endpoint', server));
    await Promise.all([this.upstreamCalls.forget(server), this.forgetLoad(server), ...endpoint]);
  }

  /** The Prometheus text exposition; serve it with `contentType`. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** The OpenMetrics exposition, with exemplars; serve it with `openMetricsContentType`. */
  renderOpenMetrics(): Promise<string> {
    return renderOpenMetrics(this.registry);
  }
}

function addLiveMetrics(register: Registry, live: () => LiveCounts): void {
  const gauge = (name: string, help: string, pick: (counts: LiveCounts) => number): void =>
    gaugeAtScrape(register, { name: `${PREFIX}${name}`, help, fill: (record) => record({}, pick(live())) });
  gauge(
    'mrtr_held_calls',
    "Calls to 2025-era servers held on this replica while the client answers the server's question (MRTR).",
    (c) => c.heldCalls,
  );
  gauge(
    'listen_streams_open',
    'subscriptions/listen streams open on this replica (modern clients and 2025 sessions).',
    (c) => c.listenStreams,
  );
  gauge(
    'cache_bytes',
    "Bytes held by this replica's in-memory cache store (cache.maxBytes bounds it).",
    (c) => c.cacheBytes,
  );
}

/** Each upstream's state, restarts and era, read at scrape. */
function addUpstreamMetrics(register: Registry, upstreams: () => Iterable<UpstreamSnapshot>): void {
  gaugeAtScrape(register, {
    name: `${PREFIX}upstream_state`,
    help: `Upstream state: 1 for the current one of ${UPSTREAM_STATES.join('|')}, 0 for the others.`,
    labelNames: ['server', 'state'],
    fill(record) {
      for (const upstream of upstreams()) {
        for (const state of UPSTREAM_STATES) record({ server: upstream.name, state }, upstream.state === state ? 1 : 0);
      }
    },
  });
  counterAtScrape(register, {
    name: `${PREFIX}upstream_restarts_total`,
    help: 'Restarts of each upstream since it was started.',
    labelNames: ['server'],
    fill(record) {
      for (const upstream of upstreams()) record({ server: upstream.name }, upstream.restarts);
    },
  });
  gaugeAtScrape(register, {
    name: `${PREFIX}upstream_info`,
    help:
      'Always 1; the era label is the protocol era of the upstream (modern, legacy, or unknown before the ' + 'probe).',
    labelNames: ['server', 'era'],
    fill(record) {
      for (const upstream of upstreams()) record({ server: upstream.name, era: upstream.era ?? 'unknown' }, 1);
    },
  });
}

/** The cache's running totals, read at scrape. */
function addCacheMetrics(register: Registry, cache: () => CacheSnapshot): void {
  // The callbacks are read once per metric per scrape; prom-client runs every collect synchronously at the
  // start of one render, so the numbers of one scrape cannot interleave with other work.
  const cacheCounter = (name: string, help: string, pick: (s: CacheSnapshot) => number): void =>
    counterAtScrape(register, { name: `${PREFIX}${name}`, help, fill: (record) => record({}, pick(cache())) });
  cacheCounter('cache_hits_total', 'Answers served from the cache store.', (s) => s.hits);
  cacheCounter(
    'cache_misses_total',
    'Cacheable requests not found in the store (including callers that joined another fetch).',
    (s) => s.misses,
  );
  cacheCounter(
    'cache_invalidations_total',
    'Cache invalidations handled, local and heard from other replicas.',
    (s) => s.invalidations,
  );
  cacheCounter('cache_fetches_total', 'Requests sent upstream to fill the cache.', (s) => s.fetches);
  cacheCounter(
    'cache_store_errors_total',
    'Cache store operations that failed or were skipped while the store was unreachable.',
    (s) => s.storeErrors,
  );
}
