// Where time is the behaviour under test (an outage must not slow answers down), a bound applies to a
// percentile or a total of many samples, never to one, and every bound is scaled by one factor:
// TEST_TIME_FACTOR=3 on a machine known to be slow.
export const TIME_FACTOR = Math.max(1, Number(process.env.TEST_TIME_FACTOR) || 1);

/** `ms` scaled by TEST_TIME_FACTOR. */
export const scaled = (ms: number): number => ms * TIME_FACTOR;

/** The nearest-rank percentile (`p` in 0..1) of the samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error('no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
