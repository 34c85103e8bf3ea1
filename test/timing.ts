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

/**
 * `run`, tried again every `stepMs` while it throws (as calls on a relay whose Redis connections are still coming up
 * do), up to `attempts` more times; then its error stands.
 */
export async function retried<T>(run: () => Promise<T>, attempts = 100, stepMs = 20): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, stepMs));
    }
  }
}
