// The servers being served, each on the stack src/layers/stack.ts builds over its transport, plus its
// notification watches. Reload adds, replaces and removes servers here.
import type { Upstream } from '../../bridge/upstream.js';
import type { ListCache } from '../../cache/list-cache.js';
import type { ServerConfig } from '../config/index.js';
import type { Log } from '../../infra/log.js';
import { buildServerStack, type LimitedUpstream, type LoadSnapshot, type ServedUpstream } from '../layers/index.js';
import type { ServerMeter, UpstreamSnapshot } from '../ops/index.js';
import type { HeldCalls } from '../mrtr/index.js';
import { followUpstreamChanges, ResourceWatch, type UpstreamWatch } from '../notify/index.js';
import { createUpstream } from '../upstream-factory.js';
import type { CallerReach } from './credentials.js';

export interface ServerSetOptions {
  cache: ListCache;
  held: HeldCalls;
  /** A request to `server` waited `seconds` in its queue (for metrics). */
  queueWaited(server: string, seconds: number): void;
  /** The meter each server's upstream calls are recorded by (for metrics and the status page). */
  meterOf(server: string): ServerMeter;
  /** A removed server has stopped: its metric series go (for metrics). */
  forgetMetrics(server: string): Promise<void>;
  log: Log;
  /**
   * How a server with `credentials:` or `secrets:` reaches each caller's own credential or values
   * (src/gateway/credentials.ts); undefined for any other server.
   */
  callerReachOf?(name: string, server: ServerConfig): Promise<CallerReach | undefined>;
}

export class ServerSet {
  /** What clients are served, in config order (merged lists follow it). The aggregate and edge read this map. */
  readonly upstreams = new Map<string, ServedUpstream>();
  /** Each server's public name prefix on /mcp. */
  readonly prefixes = new Map<string, string>();
  /** The bare upstreams, below every wrapper: where resource subscriptions go. */
  private readonly raw = new Map<string, Upstream>();
  private readonly watches = new Map<string, UpstreamWatch>();
  /** Each server's limits (maxInFlight, maxQueued, queueTimeoutMs), for metrics and /readyz. */
  private readonly limited = new Map<string, LimitedUpstream>();
  /** The config each running server was started from. */
  private readonly running = new Map<string, ServerConfig>();
  readonly resourceWatch: ResourceWatch;

  constructor(private readonly options: ServerSetOptions) {
    this.resourceWatch = new ResourceWatch(this.raw, this.watches);
  }

  names(): IterableIterator<string> {
    return this.upstreams.keys();
  }

  /** Whether `server` runs with exactly these settings (then a reload leaves it alone). */
  runsAs(name: string, server: ServerConfig): boolean {
    const before = this.running.get(name);
    return before !== undefined && JSON.stringify(before) === JSON.stringify(server);
  }

  loadOf(name: string): LoadSnapshot | undefined {
    return this.limited.get(name)?.load();
  }

  /** Each server's state and load, for metrics. */
  statuses(): UpstreamSnapshot[] {
    return [...this.upstreams].map(([name, upstream]) => ({ name, ...upstream.status(), load: this.loadOf(name) }));
  }

  watchOf(name: string): UpstreamWatch | undefined {
    return this.watches.get(name);
  }

  /**
   * Makes, before anything changes, the upstreams whose making may fail: an OpenAPI server's reads and
   * validates its document. A reload with one that cannot be made is refused whole (the others made are
   * closed); add() then takes what was made here.
   */
  async prepare(
    entries: readonly [string, ServerConfig][],
    envReads: readonly string[],
  ): Promise<Map<string, Upstream>> {
    const made = new Map<string, Upstream>();
    try {
      for (const [name, server] of entries)
        if (server.transport === 'openapi')
          made.set(name, await createUpstream(name, server, this.options.log.child({ server: name }), envReads));
    } catch (error) {
      await Promise.all([...made.values()].map((upstream) => upstream.close().catch(() => {})));
      throw error;
    }
    return made;
  }

  /** Starts serving one server: its upstream, wrappers, notifications and watches. Cold path. */
  async add(
    name: string,
    server: ServerConfig,
    envReads: readonly string[],
    prepared?: Upstream,
  ): Promise<ServedUpstream> {
    const { cache, held, log } = this.options;
    const upstreamLog = log.child({ server: name });
    const reach = await this.options.callerReachOf?.(name, server);
    const upstream = prepared ?? (await createUpstream(name, server, upstreamLog, envReads, reach?.env));
    this.raw.set(name, upstream);
    // A server reached as each caller has no listen stream of the gateway's own: it would be refused (whose
    // token would it carry?). Its lists live per caller in the cache for their ttlMs.
    // Nor has a server with a child per caller: each caller's lists are read from their own child.
    if (!listsPerCaller(server))
      this.watches.set(name, followUpstreamChanges(name, upstream, cache, this.resourceWatch, upstreamLog));
    const { served, limits } = buildServerStack(upstream, server, {
      cache,
      held,
      meter: this.options.meterOf(name),
      queueWaited: (seconds) => this.options.queueWaited(name, seconds),
      log: upstreamLog,
      caller: reach,
    });
    this.limited.set(name, limits);
    this.upstreams.set(name, served);
    this.prefixes.set(name, server.prefix ?? name);
    this.running.set(name, server);
    return served;
  }

  /** Servers that read their offer from a source (an OpenAPI document) read it again; the others are untouched. */
  async reread(names: readonly string[]): Promise<void> {
    await Promise.all(names.map((name) => this.raw.get(name)?.reread?.()));
  }

  /** Why the server knows a tool by this name but does not offer it (Upstream.whyNotOffered), if it says. */
  whyNotOffered(name: string, tool: string): string | undefined {
    return this.raw.get(name)?.whyNotOffered?.(tool);
  }

  /**
   * Whether the server's lists are each caller's own (a child per caller, or reached as each caller): read as
   * the gateway they hold nothing, so /mcp reads them as the caller to route a name (Router.confirm).
   */
  listsPerCaller(name: string): boolean {
    const server = this.running.get(name);
    return server !== undefined && listsPerCaller(server);
  }

  /** New requests no longer find the server; retire() ends what it still runs. */
  remove(name: string): void {
    this.watches.delete(name);
    this.upstreams.delete(name);
    this.prefixes.delete(name);
    this.running.delete(name);
    this.raw.delete(name);
    this.limited.delete(name);
  }

  /** Puts the served map in `order` (the new config's), as merged lists follow it. */
  reorder(order: readonly string[]): void {
    const entries = order.map((name) => [name, this.upstreams.get(name)!] as const);
    this.upstreams.clear();
    for (const [name, served] of entries) this.upstreams.set(name, served);
  }

  /** Stops a server no longer served: those requests in flight finish (up to drainMs), then it is closed. */
  async retire(name: string, served: ServedUpstream, watch: UpstreamWatch | undefined, drainMs: number): Promise<void> {
    watch?.stop();
    if (!(await served.drained(drainMs)))
      this.options.log.warn(
        { server: name, drainMs },
        'requests to a replaced or removed server still in flight after listen.drainMs; cutting them off',
      );
    await served.close();
    // A removed server's series go with it, now that nothing in flight can record more; a replaced one (or
    // one a later reload added back meanwhile) keeps its name and its series.
    if (!this.upstreams.has(name)) await this.options.forgetMetrics(name);
  }

  /** Children start in the background; requests wait for them (up to their timeout). */
  startAll(): void {
    for (const upstream of this.upstreams.values()) void upstream.start();
  }

  stopWatches(): void {
    for (const watch of this.watches.values()) watch.stop();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.upstreams.values()].map((u) => u.close()));
  }
}

/** A server with a child per caller, or reached as each caller (credentials:), lists to each caller alone. */
function listsPerCaller(server: ServerConfig): boolean {
  // An OpenAPI server's lists come from its document, the same for every caller, whoever's token a call carries.
  if (server.transport === 'openapi') return false;
  return server.transport === 'stdio' ? server.perCaller : server.credentials !== undefined;
}
