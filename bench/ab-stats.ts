// Small statistics for bench:ab: medians, and a bootstrap interval for the median of per-block ratios
// (a block is one ABBA or BAAB quartet, so each ratio already has both positions in it).

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** A deterministic generator (mulberry32), so the same samples always give the same interval. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The 2.5th and 97.5th percentiles of the median over 2,000 resamples with replacement. */
export function bootstrapMedian(values: readonly number[], resamples = 2_000): [number, number] {
  if (values.length < 2) return [values[0] ?? NaN, values[0] ?? NaN];
  const next = random(values.length * 7919);
  const medians: number[] = [];
  const sample = new Array<number>(values.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < values.length; i++) sample[i] = values[Math.floor(next() * values.length)]!;
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

export function summariseRatios(ratios: readonly number[]): RatioSummary {
  const [low, high] = bootstrapMedian(ratios);
  return { median: median(ratios), low, high, min: Math.min(...ratios), max: Math.max(...ratios), n: ratios.length };
}

export const formatRatio = (r: RatioSummary): string =>
  `×${r.median.toFixed(3)} (95% CI ×${r.low.toFixed(3)}–×${r.high.toFixed(3)}; blocks ×${r.min.toFixed(3)}–×${r.max.toFixed(3)}, n=${r.n})`;
