// One call to a 2025 server that the gateway holds open across the client's input rounds. The server's
// requests for input and its final answer arrive as events, in order; each client round waits for the
// next one. The call is the gateway's (not the client's HTTP request's): it outlives each round and ends
// with its answer, its cancellation, or its expiry.
import { randomBytes } from 'node:crypto';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import type { CancelSignal } from '../../protocol/cancel.js';
import type {
  JsonObject,
  JsonRpcErrorObject,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { RequestStateCodec } from './request-state.js';

export type ServerAnswer = { result: JsonObject } | { error: JsonRpcErrorObject };

export type CallEvent =
  | { kind: 'answer'; response: JsonRpcResponse }
  | { kind: 'ask'; method: string; params: JsonObject | undefined; respond: (answer: ServerAnswer) => void };

export class HeldCall {
  readonly id = randomBytes(12).toString('base64url');
  /** Whose call it is (RequestOptions.authContext): a caller may hold only so many (mrtr.maxHeldPerCaller). */
  readonly caller: string;
  round = 0;
  /** The server request the client was asked to answer, under its inputRequests key. */
  asked: { key: string; respond: (answer: ServerAnswer) => void } | undefined;
  private readonly events: CallEvent[] = [];
  private wake: (() => void) | undefined;
  private readonly abort = new AbortController();
  private notify: ((notification: JsonRpcNotification) => void) | undefined;
  private progressToken: unknown;
  private expiry: NodeJS.Timeout | undefined;
  finished = false;
  /** Told once the server's call has ended (answered, failed, cancelled), held or not. */
  onFinished: (() => void) | undefined = undefined;

  /** Sends the request upstream; the server's questions and answer queue up as events. */
  constructor(
    /** The upstream holding it (a reload retiring that upstream cancels its calls). */
    readonly upstream: Upstream,
    message: JsonRpcRequest,
    options: RequestOptions,
  ) {
    this.caller = options.authContext ?? '';
    void upstream
      .request(message, {
        ...options,
        signal: this.abort.signal,
        onNotification: (notification) => this.relay(notification),
        onServerRequest: (request) =>
          new Promise<ServerAnswer>((respond) =>
            this.push({ kind: 'ask', method: request.method, params: request.params, respond }),
          ),
      })
      .then(
        (response) => {
          this.finished = true;
          this.onFinished?.();
          this.push({ kind: 'answer', response });
        },
        (error: Error) => {
          this.finished = true;
          this.onFinished?.();
          this.push({
            kind: 'answer',
            response: {
              jsonrpc: '2.0',
              id: message.id,
              error: { code: -32603, message: `mcp-gateway: ${error.message}` },
            },
          });
        },
      );
  }

  /**
   * The next event, for the client round now waiting. Its progress notifications go to this round's
   * listener; the round's client going away cancels the whole call.
   */
  async next(
    signal: CancelSignal | undefined,
    onNotification: RequestOptions['onNotification'],
    progressToken: unknown,
  ): Promise<CallEvent | undefined> {
    this.notify = onNotification;
    this.progressToken = progressToken;
    const gone = (): void => this.cancel();
    signal?.addEventListener('abort', gone, { once: true });
    try {
      while (this.events.length === 0) {
        if (signal?.aborted) {
          this.cancel();
          return undefined;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
      return this.events.shift();
    } finally {
      signal?.removeEventListener('abort', gone);
      this.notify = undefined;
    }
  }

  /** Keeps the call for the client's retry until `ms` from now, then cancels it. */
  holdFor(ms: number, onExpired: () => void): void {
    clearTimeout(this.expiry);
    this.expiry = setTimeout(() => {
      onExpired();
      this.cancel();
    }, ms);
    this.expiry.unref();
  }

  resumed(): void {
    clearTimeout(this.expiry);
  }

  /** Cancels the call upstream (the server is told); an outstanding question is answered with an error. */
  cancel(): void {
    clearTimeout(this.expiry);
    this.asked?.respond({ error: { code: -32603, message: 'The client did not answer; the request was cancelled' } });
    this.asked = undefined;
    this.abort.abort();
  }

  private push(event: CallEvent): void {
    this.events.push(event);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private relay(notification: JsonRpcNotification): void {
    const notify = this.notify;
    if (!notify) return; // between rounds nobody listens
    if (this.progressToken !== undefined && notification.method === 'notifications/progress' && notification.params)
      notification.params.progressToken = this.progressToken;
    notify(notification);
  }
}

export interface HeldCalls {
  codec: RequestStateCodec;
  /** Calls held on this instance, by id. */
  calls: Map<string, HeldCall>;
  /** How long a held call waits for the client's retry. */
  holdMs: number;
  /** Calls one caller may have held at once, across servers (mrtr.maxHeldPerCaller). */
  maxHeldPerCaller: number;
  /**
   * How long a new call waits behind another caller's held call on a server that cannot tell askers apart
   * (mrtr.queueMs).
   */
  queueMs: number;
  /** Whether replicas find each other through Redis (so a retry for another instance was offered to it first). */
  shared: boolean;
}

/**
 * Cancels the calls waiting for a client's retry (the server is told), leaving those a retry is running.
 * For a draining replica: once it stops listening no retry can reach it, directly or forwarded.
 */
export function cancelWaitingCalls(held: HeldCalls): number {
  let cancelled = 0;
  for (const [id, call] of held.calls) {
    if (!call.asked) continue;
    call.cancel();
    held.calls.delete(id);
    cancelled++;
  }
  return cancelled;
}
