// Every Redis user in the gateway (shared cache, rate limits, 2025 sessions) reconnects on its own and keeps
// serving without Redis; what an operator needs is one line when an outage starts and one when it ends,
// not one per failed command or reconnect attempt.
import type { Log } from './log.js';

export interface OutageWords {
  /** What the gateway does without Redis, logged when the outage starts. */
  lost: string;
  /** What works again, logged when it ends. */
  back: string;
}

export class OutageLog {
  private down = false;

  constructor(
    private readonly log: Log,
    private readonly where: string,
    private readonly words: OutageWords,
  ) {}

  get isDown(): boolean {
    return this.down;
  }

  lost(error: unknown): void {
    if (this.down) return;
    this.down = true;
    this.log.warn({ redis: this.where, err: error instanceof Error ? error.message : String(error) }, this.words.lost);
  }

  back(): void {
    if (!this.down) return;
    this.down = false;
    this.log.info({ redis: this.where }, this.words.back);
  }
}
