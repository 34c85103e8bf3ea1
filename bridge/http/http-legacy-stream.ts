// The standalone GET stream of one 2025-era Streamable HTTP session: the only place such a server sends
// what is not tied to a request (list changes, resource updates, its own requests such as ping). Opened
// once the session is initialised, it hands every message to the session (as messages on a request's
// stream are handed), and is opened again with backoff whenever it ends or breaks. A 405 means the server
// offers none, and a 404 that the session is gone: both stop it (the session opens a new stream after it
// re-initialises). It has no deadline, and close() drops it at once, so it never holds a shutdown.
import type { JsonRpcNotification, JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import { backoffDelay, type BackoffPolicy } from '../backoff.js';
import type { HttpEndpoint } from './http-endpoint.js';
import type { HttpExchange, StreamPeer } from './http-exchange.js';
import { describeExchange, type Where } from './http-failures.js';

/** 1 s doubling to 30 s (with the usual jitter); the crash fields are unused here. */
const REOPEN: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000, crashLimit: Infinity, windowMs: 0 };
/** A stream that stayed open this long (or carried a message) was healthy: the next reopen waits 1 s again. */
const HEALTHY_AFTER_MS = 30_000;
const WHAT = 'the GET event stream';

export class LegacyEventStream implements StreamPeer {
  private readonly headers: string[];
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Reopens since the last healthy stream. */
  private attempts = 0;
  private heard = false;

  constructor(
    private readonly endpoint: HttpEndpoint,
    /** The session's request headers (credentials, Mcp-Session-Id, MCP-Protocol-Version). */
    sessionHeaders: readonly string[],
    private readonly where: Where,
    /** Hears every message on the stream: the session, which handles them as on a request's stream. */
    private readonly peer: StreamPeer,
    private readonly log: Log,
  ) {
    this.headers = getHeaders(sessionHeaders);
  }

  open(): void {
    void this.connect();
  }

  /** Stops the stream for good: the open GET is aborted and no reopen is scheduled. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.abort.abort();
  }

  onStreamMessage(message: JsonRpcRequest | JsonRpcNotification, exchange: HttpExchange): void {
    this.heard = true;
    this.peer.onStreamMessage(message, exchange);
  }

  private async connect(): Promise<void> {
    this.timer = undefined;
    if (this.closed) return;
    const openedAt = Date.now();
    this.heard = false;
    const exchange = await this.endpoint.send('GET', this.headers, null, {
      timeoutMs: 0, // long-lived: it ends when the server or close() ends it
      maxBytes: this.where.maxBytes,
      signal: this.abort.signal,
      peer: this,
    });
    if (this.closed || exchange.end === 'cancelled') return;
    if (exchange.end === 'status' && exchange.status === 405) {
      this.log.debug({}, 'the upstream offers no GET event stream (HTTP 405)');
      return;
    }
    if (exchange.end === 'status' && exchange.status === 404) {
      this.log.debug(
        {},
        'the upstream forgot the session behind the GET event stream (HTTP 404); it is opened again with the next ' +
          'session',
      );
      return;
    }
    if (
      exchange.end === 'network' &&
      (exchange.error as NodeJS.ErrnoException | undefined)?.code === 'UND_ERR_DESTROYED'
    )
      return; // the pool is shut down
    if (this.heard || Date.now() - openedAt >= HEALTHY_AFTER_MS) this.attempts = 0;
    const delay = backoffDelay(++this.attempts, REOPEN);
    const ended = exchange.status >= 200 && exchange.status < 300; // it was open, then ended or broke
    const detail = { end: exchange.end, status: exchange.status || undefined, reopenInMs: delay };
    if (ended || this.attempts > 1) this.log.debug(detail, `${WHAT} ended; opening it again`);
    else
      this.log.warn(
        { ...detail, reason: describeExchange(this.where, `${WHAT} (GET)`, exchange) },
        `${WHAT} failed; opening it again`,
      );
    this.timer = setTimeout(() => void this.connect(), delay);
    this.timer.unref();
  }
}

/** The session's headers for a GET: no Content-Type (no body), and an Accept of the event stream only. */
function getHeaders(session: readonly string[]): string[] {
  const headers: string[] = [];
  for (let i = 0; i < session.length; i += 2) {
    const name = session[i]!;
    if (name === 'content-type' || name === 'accept') continue;
    headers.push(name, session[i + 1]!);
  }
  headers.push('accept', 'text/event-stream');
  return headers;
}
