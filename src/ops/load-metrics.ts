// Metrics of each upstream's limits: requests in flight and queued (read at scrape), refusals by reason,
// and how long queued requests waited for their slot. Requests that never queued are not observed, so
// the uncontended path records nothing.
import { Histogram, type Registry } from 'prom-client';
import { dropSeries } from './drop-series.js';
import { counterAtScrape, gaugeAtScrape } from './scraped.js';

const PREFIX = 'mcp_gateway_';

/** Queue wait buckets, in seconds: 1 ms … 60 s (queueTimeoutMs is 10 s by default). */
export const QUEUE_WAIT_BUCKETS: readonly number[] = [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface UpstreamLoad {
  inFlight: number;
  queued: number;
  /** Running totals by reason (queue_full, queue_timeout). */
  refused: Readonly<Record<string, number>>;
}

export interface LoadMetrics {
  /** Records one queued request's wait. */
  queueWaited(server: string, seconds: number): void;
  /** Drops a removed server's queue waits (the scraped metrics leave it out by themselves). */
  forget(server: string): Promise<void>;
}

/** Registers the metrics. */
export function addLoadMetrics(
  register: Registry,
  loads: () => Iterable<{ name: string; load?: UpstreamLoad }>,
): LoadMetrics {
  const eachLoad = (read: (load: UpstreamLoad, server: string) => void): void => {
    for (const { name, load } of loads()) if (load) read(load, name);
  };
  gaugeAtScrape(register, {
    name: `${PREFIX}upstream_in_flight`,
    help: 'Requests handed to each upstream and not yet answered (at most servers.<name>.maxInFlight).',
    labelNames: ['server'],
    fill: (record) => eachLoad((load, server) => record({ server }, load.inFlight)),
  });
  gaugeAtScrape(register, {
    name: `${PREFIX}upstream_queued`,
    help: 'Requests waiting for a slot on each upstream (at most servers.<name>.maxQueued).',
    labelNames: ['server'],
    fill: (record) => eachLoad((load, server) => record({ server }, load.queued)),
  });
  counterAtScrape(register, {
    name: `${PREFIX}upstream_refused_total`,
    help:
      'Requests refused with 503 because an upstream was at capacity: reason queue_full (maxQueued) or ' +
      'queue_timeout (queueTimeoutMs).',
    labelNames: ['server', 'reason'],
    fill: (record) =>
      eachLoad((load, server) => {
        for (const [reason, count] of Object.entries(load.refused)) record({ server, reason }, count);
      }),
  });
  const wait = new Histogram({
    name: `${PREFIX}upstream_queue_wait_seconds`,
    help:
      'How long requests that had to queue waited for a slot on each upstream (requests that found one free are ' +
      'not observed).',
    labelNames: ['server'],
    buckets: [...QUEUE_WAIT_BUCKETS],
    registers: [register],
  });
  return {
    queueWaited: (server, seconds) => wait.observe({ server }, seconds),
    forget: (server) => dropSeries(wait, 'server', server),
  };
}
