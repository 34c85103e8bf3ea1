// One HTTP exchange with an upstream, as an undici dispatch handler: the answer is read as it arrives
// (a JSON body, or an SSE stream whose notifications and server requests go to the caller before the
// response; a JSON body of one message per line is read as such a stream, line by line as it arrives,
// so one that never ends, a listen answered as application/json, is heard while it lasts), parsed once,
// and the exchange settles exactly once with how it ended. Timeout and the
// caller's cancellation abort the HTTP request, which closes its stream: on Streamable HTTP that is
// the cancellation.
import type { Dispatcher } from 'undici';
import type { CancelSignal } from '../../protocol/cancel.js';
import {
  isObject,
  parseUpstreamMessage,
  sameId,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import { parseJson } from '../../protocol/exact-json.js';
import { SseReader } from '../sse-reader.js';
import type { ServerRequestHandler } from '../upstream.js';

/**
 * How an exchange ended:
 * - `response`: a JSON-RPC response arrived (any HTTP status 2xx);
 * - `empty`: a 2xx without one (202, an empty body, or a stream that ended first);
 * - `status`: a non-2xx answer; `body` holds it (parsed when it was JSON);
 * - `unreadable`: a 2xx whose body is not a JSON-RPC response (`body` holds what it was);
 * - `too-large`: one message was over the size cap;
 * - `network`: no answer (refused, reset, DNS); `error` says why;
 * - `timeout`, `cancelled`: ended by the gateway or the caller.
 */
export type ExchangeEnd =
  | 'response'
  | 'empty'
  | 'status'
  | 'unreadable'
  | 'too-large'
  | 'network'
  | 'timeout'
  | 'cancelled';

/** Whoever must hear the messages that arrive on the answer's SSE stream before the response. */
export interface StreamPeer {
  onStreamMessage(message: JsonRpcRequest | JsonRpcNotification, exchange: HttpExchange): void;
}

export interface ExchangeOptions {
  /** 0 for none (a long-lived stream such as subscriptions/listen). */
  timeoutMs: number;
  /** Largest JSON body or SSE event accepted. */
  maxBytes: number;
  signal?: CancelSignal;
  /** The id of the request sent: on an SSE stream only the response with this id ends the exchange. */
  expectId?: JsonRpcId;
  onNotification?: (notification: JsonRpcNotification) => void;
  /** Told when a 2xx SSE answer opens: from then on the caller's own answer is a stream too. */
  onStreamStart?: () => void;
  /** Answers the server's own requests on this request's stream (2025 servers). */
  onServerRequest?: ServerRequestHandler;
  peer?: StreamPeer;
}

const ABORTED = new Error('aborted by mcp-gateway');
const BLANK = /^\s*$/;
const NEWLINE = 10;
/** Bytes of a non-JSON-RPC answer kept for error messages. */
const ERROR_BODY_BYTES = 64 * 1024;

export class HttpExchange implements Dispatcher.DispatchHandler {
  end: ExchangeEnd | undefined;
  status = 0;
  contentType = '';
  sessionId: string | undefined;
  /** The Retry-After header of a 503 answer (the server is busy); read for no other status. */
  retryAfter: string | undefined;
  /** The WWW-Authenticate header of a 401 or 403 answer (what the server wants instead); read for no other status. */
  challenge: string | undefined;
  response: JsonRpcResponse | undefined;
  /** What came instead of a JSON-RPC response: parsed JSON when it was JSON, else (the start of) its text. */
  body: unknown;
  error: Error | undefined;
  readonly promise: Promise<HttpExchange>;
  readonly onNotification: ((notification: JsonRpcNotification) => void) | undefined;
  readonly onServerRequest: ServerRequestHandler | undefined;
  private readonly onStreamStart: (() => void) | undefined;

  private resolve!: (exchange: HttpExchange) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private abortRequested = false;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly signal: CancelSignal | undefined;
  private readonly onAbort: (() => void) | undefined;
  private sse: SseReader | undefined;
  private chunks: Buffer[] | undefined;
  private bytes = 0;
  /** A 2xx JSON body whose complete lines have so far each been one JSON-RPC message. */
  private readsLines = false;
  private readonly maxBytes: number;
  private readonly expectId: JsonRpcId | undefined;
  private readonly peer: StreamPeer | undefined;

  constructor(options: ExchangeOptions) {
    this.promise = new Promise<HttpExchange>((resolve) => (this.resolve = resolve));
    this.maxBytes = options.maxBytes;
    this.expectId = options.expectId;
    this.onNotification = options.onNotification;
    this.onServerRequest = options.onServerRequest;
    this.onStreamStart = options.onStreamStart;
    this.peer = options.peer;
    this.timer = options.timeoutMs > 0 ? setTimeout(expire, options.timeoutMs, this) : undefined;
    this.signal = options.signal;
    if (this.signal) {
      this.onAbort = () => this.cancel();
      this.signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  /** Ends the exchange as cancelled by the caller (also used when the signal was aborted up front). */
  cancel(): void {
    if (this.settle('cancelled')) this.abortHttp();
  }

  // ---- undici handler ----------------------------------------------------------------------------

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortRequested) controller.abort(ABORTED);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.status = statusCode;
    this.contentType = first(headers['content-type'])?.toLowerCase() ?? '';
    this.sessionId = first(headers['mcp-session-id']);
    if (statusCode === 503) this.retryAfter = first(headers['retry-after']);
    if (statusCode === 401 || statusCode === 403) this.challenge = first(headers['www-authenticate']);
    if (statusCode >= 200 && statusCode < 300 && this.contentType.startsWith('text/event-stream')) {
      this.sse = new SseReader((data, type) => this.onEvent(data, type), this.maxBytes);
      this.onStreamStart?.();
    } else {
      this.chunks = [];
      this.readsLines = statusCode >= 200 && statusCode < 300;
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.end !== undefined) {
      // Settled (answered, timed out, cancelled): anything more on this stream is not wanted.
      controller.abort(ABORTED);
      return;
    }
    if (this.sse) {
      if (!this.sse.push(chunk)) this.overflow();
      return;
    }
    this.bytes += chunk.length;
    const cap = this.status >= 200 && this.status < 300 ? this.maxBytes : ERROR_BODY_BYTES;
    if (this.bytes > cap) {
      if (cap === ERROR_BODY_BYTES) return; // an error body: its start is enough
      this.overflow();
      return;
    }
    this.chunks!.push(chunk);
    // A cheap native scan per chunk; lines are only split and parsed once a line is complete.
    if (this.readsLines && chunk.indexOf(NEWLINE) !== -1) this.takeLines();
  }

  onResponseEnd(): void {
    clearTimeout(this.timer);
    if (this.end !== undefined) return;
    if (this.sse) {
      this.sse.end();
      if (this.end === undefined) this.settle('empty');
      return;
    }
    const chunks = this.chunks ?? [];
    const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    const ok = this.status >= 200 && this.status < 300;
    if (BLANK.test(text)) {
      this.settle(ok ? 'empty' : 'status');
      return;
    }
    const parsed = parseJsonOrUndefined(text);
    if (ok && isResponse(parsed)) {
      this.response = parsed;
      this.settle('response');
      return;
    }
    if (ok && parsed === undefined && this.readLines(text)) return;
    this.body = parsed === undefined ? text.slice(0, 1000) : parsed;
    this.settle(ok ? 'unreadable' : 'status');
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    clearTimeout(this.timer);
    if (this.end !== undefined) return;
    this.error = error;
    this.settle('network');
  }

  // ---- internals ---------------------------------------------------------------------------------

  private onEvent(data: string, type: string): void {
    if (this.end !== undefined || data === '' || type !== 'message') return; // priming events carry no data
    const message = parseJsonOrUndefined(data);
    if (!isObject(message)) {
      this.body = data.slice(0, 1000); // kept for the error message if no response follows
      return;
    }
    this.onMessage(message);
  }

  /**
   * Some servers answer `application/json` with one JSON-RPC message per line (notifications, then the
   * response), as they would write a stream, and may keep it open (a listen stream). The complete lines
   * are taken as messages as they arrive; the unfinished last line waits for more. The first line that is
   * not a JSON-RPC message (a pretty-printed body's `{`) ends this, and the rest is read whole at its end.
   */
  private takeLines(): void {
    const chunks = this.chunks!;
    const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const last = buffer.lastIndexOf(NEWLINE);
    const messages: JsonObject[] = [];
    for (const line of buffer.toString('utf8', 0, last).split('\n')) {
      if (BLANK.test(line)) continue;
      const message = parseJsonOrUndefined(line);
      // A response to another id is left to the whole-body reading, which has always taken it.
      if (
        !isObject(message) ||
        message.jsonrpc !== '2.0' ||
        (isResponse(message) && this.expectId !== undefined && !sameId(message.id, this.expectId))
      ) {
        this.readsLines = false;
        return;
      }
      messages.push(message);
    }
    const rest = buffer.subarray(last + 1);
    this.chunks = rest.length ? [rest] : [];
    this.bytes = rest.length; // the size cap is per message, as on an SSE stream
    for (const message of messages) if (this.end === undefined) this.onMessage(message);
  }

  /**
   * At the end of the body, what `takeLines` left (all of it when its first line was not one message):
   * read as lines when every line is a JSON object; the notifications reach the caller just before the
   * response. True when it settled.
   */
  private readLines(text: string): boolean {
    const messages: JsonObject[] = [];
    for (const line of text.split('\n')) {
      if (BLANK.test(line)) continue;
      const message = parseJsonOrUndefined(line);
      if (!isObject(message)) return false;
      messages.push(message);
    }
    for (const message of messages) if (this.end === undefined) this.onMessage(message);
    return this.end !== undefined;
  }

  private onMessage(message: JsonObject): void {
    const parsed = parseUpstreamMessage(message);
    if (parsed.kind === 'request' || parsed.kind === 'notification') {
      this.peer?.onStreamMessage(parsed.message, this);
      return;
    }
    if (isResponse(message) && (this.expectId === undefined || sameId(message.id, this.expectId))) {
      this.response = message;
      this.settle('response');
    }
  }

  /** The deadline passed (called by the timer). */
  expire(): void {
    if (this.settle('timeout')) this.abortHttp();
    else this.abortHttp(); // answered, but the stream never ended: let the connection go
  }

  private overflow(): void {
    if (this.settle('too-large')) this.abortHttp();
  }

  private abortHttp(): void {
    clearTimeout(this.timer);
    if (this.controller) {
      if (!this.controller.aborted) this.controller.abort(ABORTED);
    } else {
      this.abortRequested = true;
    }
  }

  /** Settles once; true when this call did. */
  private settle(end: ExchangeEnd): boolean {
    if (this.end !== undefined) return false;
    this.end = end;
    if (this.onAbort) this.signal!.removeEventListener('abort', this.onAbort);
    this.resolve(this);
    return true;
  }
}

function expire(exchange: HttpExchange): void {
  exchange.expire();
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return parseJson(text);
  } catch {
    return undefined;
  }
}

function isResponse(value: unknown): value is JsonRpcResponse {
  return (
    isObject(value) && 'id' in value && ('result' in value || 'error' in value) && typeof value.method !== 'string'
  );
}
