// One upstream's recent traffic for the status page: a ring of fixed time slots (10 s each, the last 5 min)
// holding calls, errors, summed latency and a coarse latency histogram. Recording is a few array writes —
// no allocation — so it can run on every upstream call; the snapshot is built only when the page asks.

/** Width of one slot and how many the ring keeps. */
export const SLOT_MS = 10_000;
export const SLOTS = 30;

/** Upper bounds (ms) of the latency histogram each slot keeps; p95 is estimated within the bucket it falls in. */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  1,
  2,
  5,
  10,
  25,
  50,
  100,
  250,
  500,
  1_000,
  2_500,
  5_000,
  10_000,
  30_000,
  Infinity,
];
const BOUNDS = LATENCY_BOUNDS_MS.length;

/** One slot as the status page draws it; latencies are undefined for a slot without calls. */
export interface RecentPoint {
  calls: number;
  errors: number;
  meanMs: number | undefined;
  p95Ms: number | undefined;
}

/** The whole window: totals over it, and its slots oldest first. */
export interface RecentTraffic {
  calls: number;
  errors: number;
  /** errors / calls in 0..1; undefined without calls. */
  errorRate: number | undefined;
  meanMs: number | undefined;
  p95Ms: number | undefined;
  points: RecentPoint[];
}

export class RecentWindow {
  /** Which slot number (time / SLOT_MS) each ring entry holds now; -1 for never used. */
  private readonly epochs = new Float64Array(SLOTS).fill(-1);
  private readonly calls = new Uint32Array(SLOTS);
  private readonly errors = new Uint32Array(SLOTS);
  private readonly sumMs = new Float64Array(SLOTS);
  private readonly histogram = new Uint32Array(SLOTS * BOUNDS);

  /** One finished call at `nowMs` (a monotonic clock: performance.now()). */
  record(nowMs: number, latencyMs: number, failed: boolean): void {
    const epoch = Math.floor(nowMs / SLOT_MS);
    const slot = epoch % SLOTS;
    if (this.epochs[slot] !== epoch) this.clear(slot, epoch);
    this.calls[slot]!++;
    if (failed) this.errors[slot]!++;
    this.sumMs[slot]! += latencyMs;
    let bound = 0;
    while (latencyMs > LATENCY_BOUNDS_MS[bound]!) bound++;
    this.histogram[slot * BOUNDS + bound]!++;
  }

  /** The last SLOTS slots up to `nowMs`, oldest first (empty slots included, so charts keep their time axis). */
  snapshot(nowMs: number): RecentTraffic {
    const newest = Math.floor(nowMs / SLOT_MS);
    const points: RecentPoint[] = [];
    const total = new Uint32Array(BOUNDS);
    let calls = 0;
    let errors = 0;
    let sumMs = 0;
    for (let epoch = newest - SLOTS + 1; epoch <= newest; epoch++) {
      const slot = epoch % SLOTS;
      if (epoch < 0 || this.epochs[slot] !== epoch || this.calls[slot] === 0) {
        points.push({ calls: 0, errors: 0, meanMs: undefined, p95Ms: undefined });
        continue;
      }
      const slotCalls = this.calls[slot]!;
      const counts = this.histogram.subarray(slot * BOUNDS, (slot + 1) * BOUNDS);
      for (let b = 0; b < BOUNDS; b++) total[b]! += counts[b]!;
      calls += slotCalls;
      errors += this.errors[slot]!;
      sumMs += this.sumMs[slot]!;
      points.push({
        calls: slotCalls,
        errors: this.errors[slot]!,
        meanMs: round(this.sumMs[slot]! / slotCalls),
        p95Ms: p95(counts, slotCalls, this.sumMs[slot]! / slotCalls),
      });
    }
    return {
      calls,
      errors,
      errorRate: calls ? errors / calls : undefined,
      meanMs: calls ? round(sumMs / calls) : undefined,
      p95Ms: calls ? p95(total, calls, sumMs / calls) : undefined,
      points,
    };
  }

  private clear(slot: number, epoch: number): void {
    this.epochs[slot] = epoch;
    this.calls[slot] = 0;
    this.errors[slot] = 0;
    this.sumMs[slot] = 0;
    this.histogram.fill(0, slot * BOUNDS, (slot + 1) * BOUNDS);
  }
}

/**
 * The 95th percentile, estimated within the bucket it falls in (linearly between the bucket's bounds, as
 * Prometheus's histogram_quantile does), so a server whose calls all take 5-15 ms does not read as the
 * bucket's edge; past the last finite bound, the mean (the best left to say).
 */
function p95(counts: Uint32Array, calls: number, meanMs: number): number {
  const rank = Math.ceil(calls * 0.95);
  let seen = 0;
  for (let b = 0; b < BOUNDS; b++) {
    const inBucket = counts[b]!;
    if (seen + inBucket >= rank) {
      const upper = LATENCY_BOUNDS_MS[b]!;
      if (!Number.isFinite(upper)) return round(meanMs);
      const lower = b === 0 ? 0 : LATENCY_BOUNDS_MS[b - 1]!;
      return round(lower + ((upper - lower) * (rank - seen)) / inBucket);
    }
    seen += inBucket;
  }
  return round(meanMs);
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** The window of an upstream that has had no call yet. */
export function emptyTraffic(nowMs: number): RecentTraffic {
  return new RecentWindow().snapshot(nowMs);
}
