// What the stdio and HTTP+SSE upstreams share: one connection (a child's pipes; an event stream and the
// endpoint it names for POSTs) on which nothing says which request a message answers. The gateway's own ids
// (PendingRequests) pair answers with requests, the era's dialect prepares what goes out, and what comes in
// is sorted here: answers to their request, the server's own requests to serveServerRequest (a 2025 server
// asks its client mid-call), progress and log messages to their caller, list changes to listeners. The
// transport says how a message is written, and what starting, dropping and restarting the connection mean.
import {
  ErrorCode,
  errorResponse,
  isObject,
  parseUpstreamMessage,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../protocol/jsonrpc.js';
import type { Log } from '../infra/log.js';
import type { Dialect } from './dialect.js';
import { serveServerRequest, type LegacyLine } from './legacy/index.js';
import { PendingRequests } from './pending-requests.js';
import { SupervisedUpstream, type SupervisedConfig } from './supervised-upstream.js';
import type { RequestOptions } from './upstream.js';

export interface LineConfig extends SupervisedConfig {
  timeoutMs: number;
  /** servers.<name>.roots: the answer to a roots/list no caller can be asked (none when unset). */
  roots?: readonly JsonObject[] | undefined;
}

/** How the transport's connection is seen by a 2025 session (legacy-line.ts), besides the gateway's ids. */
export type LineEnds = Pick<LegacyLine, 'send' | 'alive' | 'hint'>;

export abstract class LineUpstream extends SupervisedUpstream {
  /** How to speak to the server; set anew each time a connection is ready (a 2025 server's session is new). */
  protected dialect: Dialect | undefined;
  protected pending: PendingRequests;

  constructor(
    private readonly line: LineConfig,
    log: Log,
    /** Where messages come from, for the log: "stdout", "event-stream". */
    private readonly source: string,
  ) {
    super(line, log);
    this.pending = this.newPending();
  }

  /** Writes one message the pending requests let out (with the gateway's id) to the connection now. */
  protected abstract write(message: unknown): void;

  /** Requests of a new connection: the old one's were failed with it. */
  protected newPending(): PendingRequests {
    return new PendingRequests(
      (message) => this.write(message),
      (method, response) => this.dialect?.complete(method, response),
      (method, ms) =>
        `Upstream '${this.name}' did not answer ${method} within ${ms} ms; the request was cancelled. Raise ` +
        `servers.${this.name}.timeoutMs if it needs longer.`,
    );
  }

  /** A ready connection's request: answered by the dialect itself when it can (a 2025 server's), else sent. */
  protected async intercepted(
    message: JsonRpcRequest,
    options: RequestOptions,
    timeoutMs: number,
    dialect: Dialect,
  ): Promise<JsonRpcResponse> {
    const early = dialect.intercept?.(message, options);
    if (early) {
      const answer = await early;
      if (answer) return answer;
    }
    return this.dispatch(message, options, timeoutMs, dialect);
  }

  /** Onto the connection; the answer's promise is the caller's own (no async frame here: the hot path). */
  protected dispatch(
    message: JsonRpcRequest,
    options: RequestOptions,
    timeoutMs: number,
    dialect: Dialect,
  ): Promise<JsonRpcResponse> {
    // A pipe or an event stream carries no status: the caller's stream may start now, so closing it cancels.
    options.onStreamStart?.();
    return this.pending.dispatch(message, {
      timeoutMs,
      signal: options.signal,
      onNotification: options.onNotification,
      onServerRequest: options.onServerRequest,
      prepare: dialect.outgoing,
      trace:
        options.traceparent === undefined
          ? undefined
          : { traceparent: options.traceparent, tracestate: options.tracestate },
    });
  }

  /** The connection as the 2025 session sees it. */
  protected lineTo(ends: LineEnds): LegacyLine {
    return { name: this.name, ask: (request, timeoutMs) => this.pending.dispatch(request, { timeoutMs }), ...ends };
  }

  /** One message from the server, to where it belongs. */
  protected onMessage(line: LegacyLine, value: unknown): void {
    const parsed = parseUpstreamMessage(value);
    switch (parsed.kind) {
      case 'request':
        // Only a 2025 server asks its client things; whatever the era, each request gets its answer.
        return serveServerRequest(parsed.message, this.pending, line, this.line.timeoutMs, this.log, this.line.roots);
      case 'notification':
        return this.onNotification(parsed.message);
      case 'response':
        if (!this.pending.answer(parsed.message))
          this.log.debug({ id: parsed.message.id }, 'answer for a request no longer waiting (timed out or cancelled)');
        return;
      default:
        this.log.warn(
          { keys: isObject(value) ? Object.keys(value) : typeof value },
          `skipped a ${this.source} message that is not a JSON-RPC request, notification or response`,
        );
    }
  }

  private onNotification(notification: JsonRpcNotification): void {
    const method = notification.method;
    if (method === 'notifications/progress') {
      this.pending.progress(notification);
    } else if (method.endsWith('/list_changed') || method === 'notifications/resources/updated') {
      this.events.emit('listChanged', notification);
    } else if (method === 'notifications/tasks') {
      this.pending.toListen(notification);
    } else if (
      method === 'notifications/message' &&
      !this.pending.logMessage(notification, this.dialect?.logsUnasked ?? false)
    ) {
      this.log.debug(
        { params: notification.params },
        'upstream log message for no one request (none, or several, in flight asked for logs)',
      );
    }
  }

  // ---- answers while the connection is not ready ------------------------------------------------

  protected stoppedAnswer(message: JsonRpcRequest): JsonRpcResponse {
    return errorResponse(
      message.id,
      ErrorCode.InternalError,
      `Upstream '${this.name}' is stopped (the gateway is shutting down or reloading)`,
    );
  }

  protected notReadyAnswer(message: JsonRpcRequest): JsonRpcResponse {
    const { state, lastError } = this.supervisor;
    return errorResponse(
      message.id,
      ErrorCode.InternalError,
      `Upstream '${this.name}' was not ready within ${this.line.timeoutMs} ms (state: ` +
        `${state}${lastError ? `; last error: ${lastError}` : ''})`,
      { server: this.name, state },
    );
  }
}
