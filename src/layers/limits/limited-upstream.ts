// Bounds what waits for one upstream: at most maxInFlight requests handed to it at once, at most maxQueued
// waiting for a slot (served round robin across callers; a full queue gives a newcomer the place of the
// newest request of whoever holds the most), each for at most queueTimeoutMs. Past those the
// caller gets a fast refusal (HTTP 503 with Retry-After at the edge) that names the server and the setting,
// instead of the gateway holding requests, and their bodies, without limit.
//
// It sits below the cache and the MRTR bridge, right on the server's own upstream: cached answers never
// take a slot, a held 2025 call keeps its slot while the server waits for the client, and the gateway's own
// listen streams (opened on the raw upstream) are not counted. An uncontended request costs a comparison,
// an increment and one `.then` with handlers bound once: no closure, timer or await of its own.
import type { RequestOptions, Upstream } from '../../../bridge/upstream.js';
import { cancelledResponse } from '../../../protocol/cancel.js';
import { ErrorCode, errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../../protocol/jsonrpc.js';
import { overloadedResponse } from '../../../protocol/overload.js';
import { UpstreamWrapper } from '../upstream-wrapper.js';
import { FairQueue, QueueNode } from './fair-queue.js';

export interface Limits {
  maxInFlight: number;
  maxQueued: number;
  queueTimeoutMs: number;
}

export type RefusalReason = 'queue_full' | 'queue_timeout';

/** Running figures for metrics, /readyz and the status page. */
export interface LoadSnapshot {
  inFlight: number;
  queued: number;
  /** Every slot taken and someone waiting for one. */
  saturated: boolean;
  refused: Readonly<Record<RefusalReason, number>>;
  /** Queued requests whose client went away before a slot was free. */
  abandoned: number;
}

/** Lane of callers that carry no authContext (internal requests, anonymous callers). */
const NO_CALLER = '';

class Waiter extends QueueNode {
  timer: NodeJS.Timeout | undefined = undefined;
  gone: (() => void) | undefined = undefined;

  constructor(
    readonly message: JsonRpcRequest,
    readonly options: RequestOptions,
    readonly resolve: (response: JsonRpcResponse | Promise<JsonRpcResponse>) => void,
    readonly since: number,
  ) {
    super();
  }
}

export class LimitedUpstream extends UpstreamWrapper {
  private inFlight = 0;
  private readonly queue = new FairQueue<Waiter>();
  private readonly refused: Record<RefusalReason, number> = { queue_full: 0, queue_timeout: 0 };
  private abandoned = 0;
  private readonly retryAfterSeconds: number;

  constructor(
    inner: Upstream,
    private readonly limits: Limits,
    /** Told how long each request that had to queue waited for its slot, in seconds. */
    private readonly onWaited?: (seconds: number) => void,
  ) {
    super(inner);
    // A client told to come back after about one queue wait finds the queue turned over once.
    this.retryAfterSeconds = Math.max(1, Math.ceil(limits.queueTimeoutMs / 1000));
  }

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    // Nobody waiting and a slot free: straight through (a queue would only reorder the caller behind itself).
    if (this.inFlight < this.limits.maxInFlight && this.queue.size === 0) {
      this.inFlight++;
      return this.inner.request(message, options).then(this.release, this.releaseAfterThrow);
    }
    return this.wait(message, options);
  }

  load(): LoadSnapshot {
    return {
      inFlight: this.inFlight,
      queued: this.queue.size,
      saturated: this.queue.size > 0,
      refused: { ...this.refused },
      abandoned: this.abandoned,
    };
  }

  /** Requests still waiting are refused (the server is being replaced or stopped); those in flight finish. */
  override close(): Promise<void> {
    for (const waiter of this.queue.clear()) {
      this.forget(waiter);
      waiter.resolve(
        errorResponse(
          waiter.message.id,
          ErrorCode.InternalError,
          `${this.name} was stopped or replaced while this request waited for it; send it again`,
        ),
      );
    }
    return this.inner.close();
  }

  private wait(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    const signal = options.signal;
    if (signal?.aborted) return Promise.resolve(cancelledResponse(message.id));
    const key = options.authContext ?? NO_CALLER;
    if (this.queue.size >= this.limits.maxQueued) {
      // Full: the newcomer is refused, unless another caller holds far more places (then its newest goes).
      const evicted = this.queue.evictFor(key);
      if (evicted === undefined) return Promise.resolve(this.full(message));
      this.forget(evicted);
      evicted.resolve(this.full(evicted.message));
    }
    const queueTimeoutMs = this.limits.queueTimeoutMs;
    return new Promise((resolve) => {
      // The message is held as the caller's own object (borrowed, as everywhere on the request path): no copy.
      const waiter = new Waiter(message, options, resolve, performance.now());
      this.queue.push(key, waiter);
      waiter.timer = setTimeout(this.expire, queueTimeoutMs, waiter);
      if (signal) {
        waiter.gone = () => this.leave(waiter);
        signal.addEventListener('abort', waiter.gone, { once: true });
      }
    });
  }

  private full(message: JsonRpcRequest): JsonRpcResponse {
    const { maxInFlight, maxQueued } = this.limits;
    this.refused.queue_full++;
    const restarting = this.restarting();
    if (restarting)
      return this.notReady(message, restarting, 'queue_full', `and the ${maxQueued} places to wait are taken`);
    return overloadedResponse(
      message.id,
      `${this.name} is at capacity: ${maxInFlight} requests in flight and ${maxQueued} waiting ` +
        `(servers.${this.name}.maxInFlight, servers.${this.name}.maxQueued); retry later, or raise ` +
        `servers.${this.name}.maxQueued`,
      { server: this.name, reason: 'queue_full', setting: `servers.${this.name}.maxQueued` },
      this.retryAfterSeconds,
    );
  }

  /** Gives a slot back and hands it to whoever waits. */
  private freeSlot(): void {
    this.inFlight--;
    if (this.queue.size > 0) this.dispatch();
  }

  /** Bound once: the slot's release on every answer (the hot path allocates no closure for it). */
  private readonly release = (response: JsonRpcResponse): JsonRpcResponse => {
    this.freeSlot();
    return response;
  };

  /** Upstreams never reject; should one, the slot is still given back. */
  private readonly releaseAfterThrow = (error: unknown): never => {
    this.freeSlot();
    throw error;
  };

  /**
   * Hands waiting requests to free slots, one caller's turn at a time. A request whose queueTimeoutMs has
   * passed is refused, not served: on a busy event loop a slot can free up (an answer read in the poll phase)
   * before the timers phase runs its overdue timer, and serving it then would break the documented bound.
   */
  private dispatch(): void {
    while (this.inFlight < this.limits.maxInFlight) {
      const waiter = this.queue.shift();
      if (waiter === undefined) return;
      const waited = performance.now() - waiter.since;
      if (waited >= this.limits.queueTimeoutMs) {
        this.timedOut(waiter);
        continue;
      }
      this.forget(waiter);
      this.onWaited?.(waited / 1000);
      this.inFlight++;
      waiter.resolve(this.inner.request(waiter.message, waiter.options).then(this.release, this.releaseAfterThrow));
    }
  }

  /** The wait ran out: a refusal naming the setting, and the place goes to the next in line. */
  private readonly expire = (waiter: Waiter): void => {
    if (this.queue.remove(waiter)) this.timedOut(waiter);
  };

  /** Refuses a request taken out of the queue because it waited queueTimeoutMs. */
  private timedOut(waiter: Waiter): void {
    this.forget(waiter);
    this.refused.queue_timeout++;
    const { maxInFlight, queueTimeoutMs } = this.limits;
    const restarting = this.restarting();
    if (restarting) {
      waiter.resolve(
        this.notReady(
          waiter.message,
          restarting,
          'queue_timeout',
          `and this request waited ${queueTimeoutMs} ms for one of them`,
        ),
      );
      return;
    }
    waiter.resolve(
      overloadedResponse(
        waiter.message.id,
        `${this.name} had no free slot for ${queueTimeoutMs} ms (servers.${this.name}.queueTimeoutMs; ` +
          `${maxInFlight} at once, servers.${this.name}.maxInFlight); retry later, or raise ` +
          `servers.${this.name}.maxInFlight if the server can take more at once`,
        { server: this.name, reason: 'queue_timeout', setting: `servers.${this.name}.queueTimeoutMs` },
        this.retryAfterSeconds,
      ),
    );
  }

  /**
   * While the server restarts, the requests holding its slots are waiting for it to be ready (up to the
   * server's timeoutMs), not running: a refusal then is about the restart, and raising maxInFlight would
   * only let more requests wait. Read on the refusal path only. Undefined when the server is ready.
   */
  private restarting(): { state: string; lastError: string | undefined } | undefined {
    const { state, lastError } = this.inner.status();
    return state === 'ready' ? undefined : { state, lastError };
  }

  private notReady(
    message: JsonRpcRequest,
    { state, lastError }: { state: string; lastError: string | undefined },
    reason: RefusalReason,
    detail: string,
  ): JsonRpcResponse {
    const { maxInFlight } = this.limits;
    return overloadedResponse(
      message.id,
      `${this.name} is not ready (state ${state}${lastError ? `; last error: ${lastError}` : ''}): its ` +
        `${maxInFlight} slots are held by requests waiting for it to come back, ${detail}; retry later, and see the ` +
        `gateway log for why it is restarting`,
      { server: this.name, reason, state },
      this.retryAfterSeconds,
    );
  }

  /** The client went away while waiting: its place is freed now, and the upstream never sees it. */
  private leave(waiter: Waiter): void {
    if (!this.queue.remove(waiter)) return;
    waiter.gone = undefined; // the signal dropped its listener as it fired
    this.forget(waiter);
    this.abandoned++;
    waiter.resolve(cancelledResponse(waiter.message.id));
  }

  /** Drops the waiter's timer and abort listener. */
  private forget(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    if (waiter.gone) waiter.options.signal?.removeEventListener('abort', waiter.gone);
    waiter.gone = undefined;
  }
}
