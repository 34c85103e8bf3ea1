// What the operator pages (/, /status.json, /metrics, /healthz, /readyz) read from the running gateway.
import type { ListCache } from '../../cache/list-cache.js';
import type { Aggregator } from '../aggregate/index.js';
import { loadSandboxProbe, type SandboxPolicy } from '../../bridge/sandbox/index.js';
import type { GatewayConfig } from '../config/index.js';
import type { EdgeOptions, RequestTracker } from '../edge/index.js';
import { GATEWAY_INFO } from '../../infra/version.js';
import {
  configView,
  emptyTraffic,
  type GatewayMetrics,
  renderStatusPage,
  SLOT_MS,
  type StatusSnapshot,
} from '../ops/index.js';
import type { ServerSet } from './servers.js';
import type { LiveConfig } from './running.js';

export interface OpsSources {
  startedAt: number;
  /** Read per request: a reload may change operators and servers. */
  config(): GatewayConfig;
  /** Which load the config in force came from (GET /config). */
  live: LiveConfig;
  servers: ServerSet;
  aggregate: Aggregator;
  cache: ListCache;
  tracker: RequestTracker;
  metrics: GatewayMetrics;
  /** Servers reached with each caller's own credential, and how many principals hold one for each (never who). */
  connections?: { needs(server: string): unknown; counts(): Promise<ReadonlyMap<string, number>> };
}

export function opsOptions(sources: OpsSources): EdgeOptions['ops'] {
  const { servers, config } = sources;
  return {
    startedAt: sources.startedAt,
    operators: () => config().auth?.operators,
    metrics: sources.metrics,
    page: (snapshot) => renderStatusPage(snapshot as StatusSnapshot),
    upstreams: () =>
      [...servers.upstreams].map(([name, upstream]) => ({
        name,
        required: config().servers[name]!.required,
        status: upstream.status(),
        saturated: servers.loadOf(name)?.saturated,
      })),
    snapshot: () => statusSnapshot(sources),
    config: () => {
      const current = config();
      // The values of the variables it read: wherever they landed, they are redacted.
      const secrets = current.envReads
        .map((name) => process.env[name])
        .filter((value): value is string => value !== undefined);
      return configView(
        current,
        { reload: sources.live.reloads, appliedAt: new Date(sources.live.appliedAt).toISOString() },
        secrets,
      );
    },
  };
}

/** The status page's data. */
async function statusSnapshot({
  startedAt,
  config,
  servers,
  aggregate,
  cache,
  tracker,
  metrics,
  connections,
}: OpsSources): Promise<StatusSnapshot> {
  const [tools, connected, tier] = await Promise.all([
    aggregate.toolCounts(),
    connectedCounts(connections),
    sandboxTierName(config()),
  ]);
  const stats = cache.stats;
  const lookups = stats.hits + stats.misses;
  return {
    version: GATEWAY_INFO.version,
    startedAt: new Date(startedAt).toISOString(),
    uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
    upstreams: [...servers.upstreams].map(([name, upstream]) => {
      const status = upstream.status();
      return {
        name,
        transport: config().servers[name]!.transport,
        era: status.era,
        state: status.state,
        restarts: status.restarts,
        toolCount: tools.get(name),
        ...(connections?.needs(name) !== undefined && {
          connected: connected === undefined ? undefined : (connected.get(name) ?? 0),
        }),
        lastError: status.lastError,
        ...(config().servers[name]!.transport === 'stdio' && {
          sandbox: sandboxSummary(config().servers[name]!.sandboxPolicy, tier),
        }),
        ...(status.children && {
          children: status.children.map((child, index) => `#${index} ${child.state}`).join(', '),
        }),
      };
    }),
    cache: { hits: stats.hits, misses: stats.misses, hitRate: lookups ? stats.hits / lookups : undefined },
    recentDenials: tracker.recentDenials(),
    traffic: trafficOf(servers, metrics),
  };
}

/**
 * The host's sandbox tier and whether the seccomp filter is in force ("full tier · seccomp"), probed only when
 * some server is sandboxed (the module is not loaded otherwise).
 */
async function sandboxTierName(config: GatewayConfig): Promise<string | undefined> {
  if (!Object.values(config.servers).some((server) => server.sandboxPolicy)) return undefined;
  const { sandboxTier } = await loadSandboxProbe();
  const tier = await sandboxTier();
  return `${tier.name} tier · ${tier.seccomp ? 'seccomp' : 'no seccomp'}`;
}

/** A server's sandbox in a few words: tier, network, limits ("full tier · seccomp · no network · 256 MiB"). */
function sandboxSummary(policy: SandboxPolicy | undefined, tier: string | undefined): string {
  if (!policy) return 'off';
  const network =
    policy.network.kind === 'none'
      ? 'no network'
      : policy.network.kind === 'all'
        ? 'all network'
        : `network: ${policy.network.hosts.join(', ')}`;
  const limits = [
    policy.memoryBytes !== undefined && `${Math.round(policy.memoryBytes / 1048576)} MiB`,
    policy.cpuSeconds !== undefined && `${policy.cpuSeconds} cpu s`,
    policy.processes !== undefined && `${policy.processes} processes`,
    policy.openFiles !== undefined && `${policy.openFiles} files`,
  ].filter((part): part is string => typeof part === 'string');
  return [tier ?? 'unprobed tier', network, ...limits].join(' · ');
}

/** How many principals hold a credential for each server; undefined when the store cannot be read now (Redis away). */
async function connectedCounts(
  connections: OpsSources['connections'],
): Promise<ReadonlyMap<string, number> | undefined> {
  return connections?.counts().catch(() => undefined);
}

/** Each served upstream's recent calls (status-page charts), one shared clock for all of them. */
function trafficOf(servers: ServerSet, metrics: GatewayMetrics): StatusSnapshot['traffic'] {
  const now = performance.now();
  const upstreams = [...servers.names()].map((name) => ({
    name,
    ...(metrics.upstreamCalls.recent(name, now) ?? emptyTraffic(now)),
  }));
  return { slotSeconds: SLOT_MS / 1000, upstreams };
}
