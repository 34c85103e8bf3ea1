// The state machine every upstream connection shares, whatever its transport: the state and the event that
// announces it, the restarts taken and the last error, the pacing of restarts (a backoff that grows with
// each failure, and a crash window that marks a connection that keeps failing unhealthy instead of
// restarting it in a hot loop), and callers waiting for the connection to be ready. The transport says
// what starting, failing and restarting mean for it (a child process, or a remote server and its session).
import { EventEmitter } from 'node:events';
import type { CancelSignal } from '../protocol/cancel.js';
import type { Log } from '../infra/log.js';
import { backoffDelay, CrashWindow, type BackoffPolicy } from './backoff.js';
import { StateGate } from './state-gate.js';
import type { Era, UpstreamState, UpstreamStatus } from './upstream.js';

/** A connection that stayed ready this long forgets its earlier failures. */
const STABLE_AFTER_MS = 60_000;

/** How the transport words a failure in the log. */
export interface FailureReport {
  /** Fields of the "backing off" log line that say what failed (the exit, the kind of failure). */
  fields: Record<string, unknown>;
  /** The name the unhealthy log line counts the failures under ("exits", "failures"). */
  counted: string;
  /** The message of the "backing off" log line. */
  backingOff: string;
}

export class Supervisor {
  /** Emits 'state' (UpstreamState); the transport emits its own events ('listChanged') here too. */
  readonly events = new EventEmitter();
  state: UpstreamState = 'stopped';
  restarts = 0;
  lastError: string | undefined;
  /** When the scheduled restart runs (meaningful while backing off or unhealthy). */
  retryAt = 0;
  private consecutiveFailures = 0;
  private readyAt = 0;
  private readonly crashes: CrashWindow;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Wakes callers waiting for a state change. */
  private readonly changed = new StateGate();

  constructor(
    readonly policy: BackoffPolicy,
    private readonly log: Log,
  ) {
    this.crashes = new CrashWindow(policy.windowMs);
  }

  status(era: Era | undefined): UpstreamStatus {
    return { state: this.state, era, restarts: this.restarts, lastError: this.lastError };
  }

  setState(state: UpstreamState): void {
    if (this.state === state) return;
    this.state = state;
    this.changed.open();
    this.events.emit('state', state);
  }

  /**
   * The connection serves requests. `forgetFailures`: the backoff starts afresh at the next failure (a
   * remote server that answered is well); otherwise only a connection that stays up a while earns that,
   * so a child that dies soon after each start waits longer every time.
   */
  ready(forgetFailures: boolean): void {
    this.readyAt = Date.now();
    if (forgetFailures) this.consecutiveFailures = 0;
    this.setState('ready');
  }

  /**
   * The connection failed (lastError already says how): `restart` runs after a backoff that grows with
   * each failure, or after policy.maxMs once crashLimit failures fell within the window ('unhealthy').
   */
  failed(report: FailureReport, restart: () => void): void {
    const now = Date.now();
    if (this.readyAt && now - this.readyAt > STABLE_AFTER_MS) {
      this.crashes.reset();
      this.consecutiveFailures = 0;
    }
    this.readyAt = 0;
    this.consecutiveFailures++;
    const recent = this.crashes.record(now);
    const policy = this.policy;
    let delay: number;
    if (recent >= policy.crashLimit) {
      delay = policy.maxMs;
      this.setState('unhealthy');
      this.log.error(
        { [report.counted]: recent, windowMs: policy.windowMs, retryInMs: delay, lastError: this.lastError },
        'upstream marked unhealthy',
      );
    } else {
      delay = backoffDelay(this.consecutiveFailures, policy);
      this.setState('backing-off');
      this.log.warn({ ...report.fields, retryInMs: delay, lastError: this.lastError }, report.backingOff);
    }
    this.retryAt = now + delay;
    this.retryTimer = setTimeout(restart, delay);
    this.retryTimer.unref();
  }

  /** No more restarts: the gateway is closing or replacing this upstream. */
  stop(): void {
    this.setState('stopped');
    clearTimeout(this.retryTimer);
  }

  /**
   * Waits until the connection is ready or in a state in `failFast` (which fails a caller at once), up to
   * `deadline` or the caller's cancellation. Resolves with that state, or undefined when time ran out.
   */
  async settled(
    deadline: number,
    signal: CancelSignal | undefined,
    failFast: ReadonlySet<UpstreamState>,
  ): Promise<UpstreamState | undefined> {
    for (;;) {
      if (this.state === 'ready' || failFast.has(this.state)) return this.state;
      const remaining = deadline - Date.now();
      if (remaining <= 0 || signal?.aborted) return undefined;
      await this.changed.wait(remaining, signal);
    }
  }

  /** Resolves at the next state change, or after `ms`. */
  nextChange(ms: number): Promise<void> {
    return this.changed.wait(ms, undefined);
  }
}
