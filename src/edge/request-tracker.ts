// Requests in flight (so a shutdown can wait for them), whether the gateway is draining, and the last
// denials (for the status page).

export interface DenialRecord {
  time: string;
  principal: string;
  method: string;
  target: string | undefined;
  rule: string;
}

const KEPT_DENIALS = 50;

export class RequestTracker {
  inFlight = 0;
  /** Every request begun since start: whether the gateway has been idle between two looks (idle-heap.ts). */
  started = 0;
  draining = false;
  private readonly denials: DenialRecord[] = [];
  private idle: (() => void) | undefined;

  begin(): void {
    this.inFlight++;
    this.started++;
  }

  end(): void {
    if (--this.inFlight === 0) this.idle?.();
  }

  denied(record: DenialRecord): void {
    this.denials.push(record);
    if (this.denials.length > KEPT_DENIALS) this.denials.shift();
  }

  recentDenials(): DenialRecord[] {
    return [...this.denials].reverse();
  }

  /** Resolves true once nothing is in flight, or false when `ms` passed first. */
  whenIdle(ms: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idle = undefined;
        resolve(false);
      }, ms);
      this.idle = () => {
        clearTimeout(timer);
        this.idle = undefined;
        resolve(true);
      };
    });
  }
}
