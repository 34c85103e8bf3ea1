// Restart pacing for supervised children: exponential backoff with jitter, and a window that counts
// recent crashes so a child that keeps dying is marked unhealthy instead of restarted in a hot loop.

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** This many exits within windowMs mark the upstream unhealthy for maxMs. */
  crashLimit: number;
  windowMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 30_000, crashLimit: 5, windowMs: 60_000 };

/** Delay before restart number `attempt` (1-based): initial·2^(attempt-1), capped, ±20% jitter. */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export class CrashWindow {
  private times: number[] = [];

  constructor(private readonly windowMs: number) {}

  /** Records a crash at `now` and returns how many fell within the window, this one included. */
  record(now: number): number {
    this.times = this.times.filter((t) => now - t < this.windowMs);
    this.times.push(now);
    return this.times.length;
  }

  reset(): void {
    this.times = [];
  }
}
