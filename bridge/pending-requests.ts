// Multiplexes many callers onto one connection: each request gets the gateway's own id (and its progress
// token the same number), so concurrent callers never collide; answers and progress go back to their
// caller with the caller's own id and token restored. Timeouts and cancellation end here too.
import { cancelledResponse, type CancelSignal } from '../protocol/cancel.js';
import { markFailure } from '../protocol/failure-mark.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../protocol/jsonrpc.js';
import { MAY_ASK, META } from '../protocol/mcp.js';
import { lendTraceMeta, restoreTraceMeta, type TraceContext } from './trace-meta.js';
import type { ServerRequestHandler } from './upstream.js';

interface Pending {
  callerId: JsonRpcId;
  method: string;
  callerToken: unknown;
  /** The request set a logLevel: log messages may be meant for it. */
  logs: boolean;
  resolve(response: JsonRpcResponse): void;
  onNotification: ((notification: JsonRpcNotification) => void) | undefined;
  timer: NodeJS.Timeout | undefined;
  signal: CancelSignal | undefined;
  onAbort: (() => void) | undefined;
  onServerRequest: ServerRequestHandler | undefined;
}

const LISTEN = 'subscriptions/listen';
const ONCE = { once: true } as const;

export interface Dispatch {
  timeoutMs: number;
  signal?: CancelSignal;
  onNotification?: (notification: JsonRpcNotification) => void;
  onServerRequest?: ServerRequestHandler;
  /** Given the message once its id and token are the gateway's; returns what to send (a dialect's outgoing form). */
  prepare?: (message: JsonRpcRequest) => JsonRpcRequest;
  /**
   * A traced call's context, lent into params._meta while the message is serialised (the message must have a _meta).
   */
  trace?: TraceContext;
}

export class PendingRequests {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Requests awaiting an answer, not counting listen streams (which wait for as long as they are open). */
  private answersDue = 0;
  /** Requests in flight that set a logLevel. */
  private loggers = 0;

  constructor(
    /** Writes one message to the connection; must serialise synchronously. */
    private readonly send: (message: unknown) => void,
    /** Settles every answer, still with the gateway's id: where a dialect completes it. */
    private readonly onAnswer: (method: string, response: JsonRpcResponse) => void = () => {},
    /** Words the error a caller gets when its request timed out. */
    private readonly describeTimeout: (method: string, timeoutMs: number) => string = (method, ms) =>
      `No answer to ${method} within ${ms} ms`,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  /** How many requests wait for an answer, listen streams left out: 1 while a lone request is in flight. */
  get waitingForAnswers(): number {
    return this.answersDue;
  }

  dispatch(message: JsonRpcRequest, options: Dispatch): Promise<JsonRpcResponse> {
    const id = this.nextId++;
    const callerId = message.id;
    const meta = message.params?._meta;
    const callerToken = isObject(meta) ? meta.progressToken : undefined;
    const logs = isObject(meta) && meta[META.logLevel] !== undefined;

    return new Promise<JsonRpcResponse>((resolve) => {
      const { signal } = options;
      if (signal?.aborted) {
        resolve(cancelledResponse(callerId));
        return;
      }
      const entry: Pending = {
        callerId,
        method: message.method,
        callerToken,
        logs,
        resolve,
        onNotification: options.onNotification,
        // 0: no limit (a listen stream lives as long as its caller wants it).
        timer: options.timeoutMs > 0 ? setTimeout(this.expire, options.timeoutMs, id, options.timeoutMs) : undefined,
        signal,
        onAbort: undefined,
        onServerRequest: options.onServerRequest,
      };
      if (signal) {
        entry.onAbort = () => this.cancel(id, 'The client closed the request');
        signal.addEventListener('abort', entry.onAbort, ONCE);
      }
      this.pending.set(id, entry);
      if (entry.method !== LISTEN) this.answersDue++;
      if (logs) this.loggers++;

      message.id = id;
      if (callerToken !== undefined) (meta as JsonObject).progressToken = id;
      const lent = options.trace && isObject(meta) ? lendTraceMeta(meta, options.trace) : undefined;
      try {
        this.send(options.prepare ? options.prepare(message) : message);
      } catch (error) {
        // A message that cannot be serialised never left: the caller gets an error, not a rejection.
        this.settle(id, entry);
        resolve(
          errorResponse(
            callerId,
            ErrorCode.InvalidParams,
            `The request could not be sent upstream: ${(error as Error).message}`,
          ),
        );
      } finally {
        // The caller's object is borrowed: give it back as it came.
        message.id = callerId;
        if (callerToken !== undefined) (meta as JsonObject).progressToken = callerToken;
        if (lent) restoreTraceMeta(meta as JsonObject, lent);
      }
    });
  }

  /** An answer from the connection; false when no request is waiting for that id (late or unknown). */
  answer(response: JsonRpcResponse): boolean {
    const id = response.id;
    const entry = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (!entry) return false;
    this.settle(id as number, entry);
    try {
      this.onAnswer(entry.method, response);
    } finally {
      response.id = entry.callerId;
      entry.resolve(response);
    }
    return true;
  }

  /**
   * Who a request from the other side belongs to, when that can be known on a connection that does not say
   * (stdio): the one request in flight that may ask the client something. Several such requests in flight
   * make it unknowable, and guessing could show one caller another's question: undefined then.
   */
  soleAsker():
    | { id: number; handler: ServerRequestHandler | undefined; method: string }
    | { ambiguous: number }
    | undefined {
    let found: [number, Pending] | undefined;
    let count = 0;
    for (const entry of this.pending) {
      if (!MAY_ASK.has(entry[1].method)) continue;
      found = entry;
      count++;
    }
    if (count > 1) return { ambiguous: count };
    return found && { id: found[0], handler: found[1].onServerRequest, method: found[1].method };
  }

  /**
   * Stops a request's clock while its caller is asked something (a person may take longer than the server's
   * timeoutMs to answer); `resumeClock` starts it again, in full.
   */
  pauseClock(id: number): void {
    const entry = this.pending.get(id);
    if (entry) clearTimeout(entry.timer);
  }

  resumeClock(id: number, timeoutMs: number): void {
    const entry = this.pending.get(id);
    if (!entry || timeoutMs <= 0) return;
    clearTimeout(entry.timer);
    entry.timer = setTimeout(this.expire, timeoutMs, id, timeoutMs);
  }

  /** A progress notification from the connection, routed to its request's caller. */
  progress(notification: JsonRpcNotification): boolean {
    const params = notification.params;
    const token = params?.progressToken;
    const entry = typeof token === 'number' ? this.pending.get(token) : undefined;
    if (!entry?.onNotification || entry.callerToken === undefined) return false;
    params!.progressToken = entry.callerToken;
    entry.onNotification(notification);
    return true;
  }

  /**
   * A notification a stdio server tags with the listen request it belongs to (the Tasks extension's
   * notifications/tasks carry its subscription id, which is the id this connection gave the listen).
   */
  toListen(notification: JsonRpcNotification): boolean {
    const meta = notification.params?._meta;
    const subscription = isObject(meta) ? meta[META.subscriptionId] : undefined;
    const entry = typeof subscription === 'number' ? this.pending.get(subscription) : undefined;
    if (entry?.method !== LISTEN || !entry.onNotification) return false;
    (meta as JsonObject)[META.subscriptionId] = entry.callerId;
    entry.onNotification(notification);
    return true;
  }

  /**
   * A log message from a connection that does not say which request it belongs to (stdio): the one request
   * in flight that set a logLevel gets it. A modern server logs only for requests that set one; a 2025
   * server (`anyRequest`) logs for any, so then it must be the only request in flight at all. Otherwise it
   * could be any one's, and guessing could show one caller another's logs: it is dropped (false). Whether
   * its level is wanted is the edge's call.
   */
  logMessage(notification: JsonRpcNotification, anyRequest: boolean): boolean {
    if (this.loggers !== 1 || (anyRequest && this.answersDue !== 1)) return false;
    for (const entry of this.pending.values()) {
      if (!entry.logs) continue;
      entry.onNotification?.(notification);
      return entry.onNotification !== undefined;
    }
    return false;
  }

  /** Fails one request whose answer can no longer come (for example its line was too long). */
  fail(id: number, message: string, data?: unknown): boolean {
    const entry = this.pending.get(id);
    if (!entry) return false;
    this.settle(id, entry);
    entry.resolve(errorResponse(entry.callerId, ErrorCode.InternalError, message, data));
    return true;
  }

  /** Fails every request in flight, for example when the connection died. */
  failAll(message: (method: string) => string, data?: unknown): void {
    for (const [id, entry] of this.pending) {
      this.settle(id, entry);
      entry.resolve(
        markFailure(errorResponse(entry.callerId, ErrorCode.InternalError, message(entry.method), data), 'unreachable'),
      );
    }
  }

  // An arrow property, bound once, so a request's timer needs no closure of its own.
  private readonly expire = (id: number, timeoutMs: number): void => {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.sendCancelled(id, 'timeout');
    this.settle(id, entry);
    entry.resolve(
      markFailure(
        errorResponse(entry.callerId, ErrorCode.InternalError, this.describeTimeout(entry.method, timeoutMs)),
        'timeout',
      ),
    );
  };

  private cancel(id: number, reason: string): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.sendCancelled(id, reason);
    this.settle(id, entry);
    entry.resolve(errorResponse(entry.callerId, ErrorCode.InternalError, `Request cancelled: ${reason}`));
  }

  private sendCancelled(id: number, reason: string): void {
    this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } });
  }

  private settle(id: number, entry: Pending): void {
    if (this.pending.delete(id)) {
      if (entry.method !== LISTEN) this.answersDue--;
      if (entry.logs) this.loggers--;
    }
    clearTimeout(entry.timer);
    if (entry.onAbort) entry.signal!.removeEventListener('abort', entry.onAbort);
  }
}
