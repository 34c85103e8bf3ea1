// Small statistics for bench:ab: medians, and a bootstrap interval for the median of per-block ratios
// (a block is one ABBA or BAAB quartet, so each ratio already has both positions in it). Blocks served by
// the same pair of processes are not independent (a process can sit a few percent off for its whole
// life), so the bootstrap draws pairs first and blocks within them: the interval then covers that too.
import { seededRandom } from '../test/seeded-random.js';

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The 2.5th and 97.5th percentiles of the median over 2,000 two-stage resamples (groups, then values). */
export function bootstrapMedian(groups: readonly (readonly number[])[], resamples = 2_000): [number, number] {
  const all = groups.flat();
  if (all.length < 2) return [all[0] ?? NaN, all[0] ?? NaN];
  const next = seededRandom(all.length * 7919);
  const pick = <T>(from: readonly T[]): T => from[Math.floor(next() * from.length)]!;
  const medians: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const sample: number[] = [];
    for (let g = 0; g < groups.length; g++) {
      const group = pick(groups);
      for (let i = 0; i < group.length; i++) sample.push(pick(group));
    }
    medians.push(median(sample));
  }
  medians.sort((a, b) => a - b);
  return [medians[Math.floor(0.025 * resamples)]!, medians[Math.ceil(0.975 * resamples) - 1]!];
}

export interface RatioSummary {
  median: number;
  low: number;
  high: number;
  min: number;
  max: number;
  n: number;
}

/** Ratios grouped by the process pair that gave them. */
export function summariseRatios(groups: readonly (readonly number[])[]): RatioSummary {
  const ratios = groups.flat();
  const [low, high] = bootstrapMedian(groups);
  return { median: median(ratios), low, high, min: Math.min(...ratios), max: Math.max(...ratios), n: ratios.length };
}

export const formatRatio = (r: RatioSummary): string =>
  `×${r.median.toFixed(3)} (95% CI ×${r.low.toFixed(3)}–×${r.high.toFixed(3)}; blocks ` +
  `×${r.min.toFixed(3)}–×${r.max.toFixed(3)}, n=${r.n})`;
