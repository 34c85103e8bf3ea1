// Where time is the behaviour under test (an outage must not slow answers down), a bound applies to a
// percentile or a total of many samples, never to one, and every bound is scaled by one factor:
// TEST_TIME_FACTOR=3 on a machine known to be slow.
import { setTimeout as sleep } from 'node:timers/promises';

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

/**
 * Polls `predicate` every `stepMs` until it holds or `ms` (times TEST_TIME_FACTOR) pass; says whether it held.
 * The limit only delays a failure, so a slow machine stretches it rather than failing a correct gateway.
 */
export async function until(predicate: () => boolean | Promise<boolean>, ms: number, stepMs = 20): Promise<boolean> {
  // The monotonic clock: Date.now() is whole milliseconds (a 100 ms wait could end 99.1 ms after it began, seen
  // on CI) and moves when the wall clock is set.
  const deadline = performance.now() + scaled(ms);
  while (performance.now() < deadline) {
    if (await predicate()) return true;
    await sleep(stepMs);
  }
  return predicate();
}

/** Like `until` (also scaled by TEST_TIME_FACTOR), but a condition not met in time fails the test. */
export async function eventually(predicate: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  if (!(await until(predicate, ms, 10))) throw new Error('condition not met in time');
}
