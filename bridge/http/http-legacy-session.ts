// A 2025-era Streamable HTTP session: `initialize` and `notifications/initialized`, then every request
// with `Mcp-Session-Id` and the negotiated `MCP-Protocol-Version`, the gateway's own ids (callers share
// the session, so their ids could collide) and no modern _meta keys. A 404 means the server forgot the
// session (it restarted): the session is opened again once and the request retried. Requests the server
// sends on a response stream are answered here, as the stdio bridge answers them. Once initialised (and
// after every re-initialise) the session holds the server's GET event stream (http-legacy-stream.ts),
// whose messages it handles the same way.
import type { EventEmitter } from 'node:events';
import {
  ErrorCode,
  errorResponse,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import { LEGACY_CLIENT_REQUESTS, type ServerInfo } from '../../protocol/mcp.js';
import type { HttpEndpoint } from './http-endpoint.js';
import { looksModern } from './http-era.js';
import type { HttpExchange, StreamPeer } from './http-exchange.js';
import { LegacyEventStream } from './http-legacy-stream.js';
import { appendTraceHeaders } from './mcp-headers.js';
import {
  answerServerRequest,
  initializeParams,
  LegacyDialect,
  type LegacyHandshake,
  parseInitializeResult,
  relayServerRequest,
  toLegacyRequest,
} from '../legacy/index.js';
import * as failures from './http-failures.js';
import type { RequestOptions } from '../upstream.js';

export interface LegacySessionSettings extends failures.Where {
  clientInfo: ServerInfo;
  legacyTtlMs: number;
}

/** A request the server refused as a 2026-era server would (not run): `response` is that refusal. */
export class EraMismatch {
  constructor(readonly response: JsonRpcResponse) {}
}

export interface LegacySessionHooks {
  /** The session can no longer serve requests (unreachable, or a new session could not be opened). */
  broken(kind: failures.FailureKind, message: string): void;
}

const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
/** How long the gateway spends on messages nobody waits for (answers to server requests, DELETE). */
const SIDE_MESSAGE_TIMEOUT_MS = 2_000;

export class LegacyHttpSession implements StreamPeer {
  /**
   * How a 2025 server is made to look modern; new with each session (its log level starts from the server's default).
   */
  private dialect: LegacyDialect | undefined;
  private sessionId: string | undefined;
  /** Every request of this session carries the same headers: one list, shared read-only. */
  private headers: readonly string[] = [];
  private nextId = 1;
  private reopening: Promise<void> | undefined;
  /** The GET stream of the current session id; replaced with it. */
  private stream: LegacyEventStream | undefined;
  private closed = false;

  constructor(
    private readonly endpoint: HttpEndpoint,
    private readonly settings: LegacySessionSettings,
    private readonly log: Log,
    private readonly events: EventEmitter,
    private readonly hooks: LegacySessionHooks,
  ) {}

  /** Runs the handshake; throws an UpstreamFailure that says what went wrong. */
  async open(): Promise<void> {
    this.stream?.close(); // the session it belonged to is being replaced
    this.stream = undefined;
    const id = this.nextId++;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: initializeParams(this.settings.clientInfo),
    });
    const exchange = await this.endpoint.send('POST', this.endpoint.headers(), body, this.options(id));
    if (exchange.end !== 'response')
      throw new failures.UpstreamFailure(
        failures.describeExchange(this.settings, 'initialize', exchange),
        failures.failureKind(exchange),
      );
    const response = exchange.response!;
    if ('error' in response) {
      throw new failures.UpstreamFailure(
        `${failures.upstream(this.settings)} refused initialize: ${response.error.message} (code ` +
          `${response.error.code})`,
        'protocol',
      );
    }
    let handshake: LegacyHandshake;
    try {
      handshake = parseInitializeResult(response.result);
    } catch (error) {
      throw new failures.UpstreamFailure(
        `${failures.upstream(this.settings)}: ${(error as Error).message}`,
        'protocol',
      );
    }
    const headers = this.endpoint.headers();
    headers.push('mcp-protocol-version', handshake.protocolVersion);
    if (exchange.sessionId !== undefined) headers.push('mcp-session-id', exchange.sessionId);
    const initialized = await this.endpoint.send('POST', headers, INITIALIZED, this.options(undefined));
    if (initialized.end !== 'empty' && initialized.end !== 'response') {
      throw new failures.UpstreamFailure(
        failures.describeExchange(this.settings, 'notifications/initialized', initialized),
        failures.failureKind(initialized),
      );
    }
    const previous = this.dialect;
    this.dialect = new LegacyDialect(
      handshake,
      this.settings.legacyTtlMs,
      async (own) => {
        const answer = await this.request(own, {});
        return answer instanceof EraMismatch ? answer.response : answer;
      },
      this.log,
    );
    this.sessionId = exchange.sessionId;
    this.headers = headers;
    this.log.info(
      { protocolVersion: handshake.protocolVersion, session: exchange.sessionId !== undefined },
      'legacy HTTP session opened',
    );
    if (previous) this.dialect.carryOver(previous);
    if (!this.closed) {
      this.stream = new LegacyEventStream(this.endpoint, headers, this.settings, this, this.log);
      this.stream.open();
    }
  }

  async request(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse | EraMismatch> {
    const early = this.dialect!.intercept(message, options);
    if (early) {
      const answer = await early;
      if (answer) return answer;
    }
    const callerId = message.id;
    const id = this.nextId++;
    const body = legacyBody(message, id);
    if (this.reopening) await this.reopening.catch(() => {});
    for (let retried = false; ; retried = true) {
      const sessionId = this.sessionId;
      const headers = options.traceparent === undefined ? this.headers : appendTraceHeaders([...this.headers], options);
      const exchange = await this.endpoint.send('POST', headers, body, {
        timeoutMs: this.settings.timeoutMs,
        maxBytes: this.settings.maxBytes,
        expectId: id,
        peer: this,
        signal: options.signal,
        onNotification: options.onNotification,
        onStreamStart: options.onStreamStart,
        onServerRequest: options.onServerRequest,
      });
      if (exchange.end === 'status' && exchange.status === 404 && sessionId !== undefined && !retried) {
        const failure = await this.renew(sessionId);
        if (failure) return failures.failureResponse(callerId, this.settings, failure);
        continue;
      }
      const response = this.settle(message.method, callerId, id, exchange);
      return looksModern(exchange) ? new EraMismatch(response) : response;
    }
  }

  /** Ends the session on the server (best effort). */
  async close(): Promise<void> {
    this.closed = true;
    this.stream?.close();
    this.stream = undefined;
    if (this.sessionId === undefined) return;
    this.sessionId = undefined;
    await this.endpoint.send('DELETE', this.headers, null, this.options(undefined, SIDE_MESSAGE_TIMEOUT_MS));
  }

  /** Messages on a request's stream, and on the GET stream (where `exchange.onNotification` is unset). */
  onStreamMessage(message: JsonRpcRequest | JsonRpcNotification, exchange: HttpExchange): void {
    const method = message.method;
    if ('id' in message) {
      const handler = exchange.onServerRequest;
      // On 2025 Streamable HTTP a request on a POST's stream belongs to that POST's call.
      if (handler && LEGACY_CLIENT_REQUESTS.has(method)) {
        void relayServerRequest(handler, message).then((answer) => this.sideMessage(answer, `answer to ${method}`));
      } else {
        this.answer(message);
      }
    } else if (method === 'notifications/progress' || (method === 'notifications/message' && exchange.onNotification)) {
      // On a POST's stream a log message belongs to that request (the edge keeps those at its level).
      exchange.onNotification?.(message);
    } else if (method.endsWith('/list_changed') || method === 'notifications/resources/updated') {
      this.events.emit('listChanged', message);
    } else if (method === 'notifications/message') {
      this.log.debug({ params: message.params }, 'upstream log message');
    }
  }

  // ---- internals ---------------------------------------------------------------------------------

  private settle(method: string, callerId: JsonRpcRequest['id'], id: number, exchange: HttpExchange): JsonRpcResponse {
    const dialect = this.dialect!;
    switch (exchange.end) {
      case 'response': {
        const response = exchange.response!;
        response.id = callerId;
        dialect.complete(method, response);
        return response;
      }
      case 'cancelled':
        this.cancelled(id, 'The client closed the request');
        return errorResponse(callerId, ErrorCode.InternalError, failures.CANCELLED_MESSAGE);
      case 'timeout':
        this.cancelled(id, 'timeout');
        break;
      case 'status': {
        const failure = failures.errorBodyOf(exchange, callerId);
        if (!failure) break;
        dialect.complete(method, failure);
        return failure;
      }
    }
    return failures.exchangeFailure(this.settings, method, callerId, exchange, (said) =>
      this.hooks.broken('unreachable', said),
    );
  }

  /** Opens a new session after `used` was forgotten; resolves with an error message when that failed. */
  private async renew(used: string): Promise<string | undefined> {
    if (this.sessionId === used && !this.reopening) {
      this.log.info({}, 'the server forgot the legacy session (HTTP 404); opening a new one');
      this.reopening = this.open().finally(() => (this.reopening = undefined));
    }
    try {
      await this.reopening;
      return undefined;
    } catch (error) {
      const message =
        `${failures.upstream(this.settings)} lost its session (HTTP 404) and a new one could not be ` +
        `opened: ${(error as Error).message}`;
      this.hooks.broken(error instanceof failures.UpstreamFailure ? error.kind : 'protocol', message);
      return message;
    }
  }

  /** A request from the server in the middle of a call: ping is answered, the rest refused. */
  private answer(request: JsonRpcRequest): void {
    const answer = answerServerRequest(request);
    if ('error' in answer) this.log.warn({ method: request.method }, 'refused a request from the upstream');
    this.sideMessage(answer, `answer to ${request.method}`);
  }

  /** On 2025 Streamable HTTP closing a stream is not cancellation: the server must be told. */
  private cancelled(id: number, reason: string): void {
    this.sideMessage(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } },
      'notifications/cancelled',
    );
  }

  private sideMessage(message: unknown, what: string): void {
    void this.endpoint
      .send('POST', this.headers, JSON.stringify(message), this.options(undefined, SIDE_MESSAGE_TIMEOUT_MS))
      .then((exchange) => {
        if (exchange.end !== 'empty' && exchange.end !== 'response') {
          this.log.warn({ end: exchange.end, status: exchange.status }, `could not send ${what} to the upstream`);
        }
      });
  }

  private options(expectId: number | undefined, timeoutMs = this.settings.timeoutMs) {
    return { timeoutMs, maxBytes: this.settings.maxBytes, expectId, peer: this };
  }
}

/**
 * The request as a legacy server must see it: the gateway's id, no modern _meta keys; the caller's object is left as it
 * was.
 */
function legacyBody(message: JsonRpcRequest, id: number): string {
  const legacy = toLegacyRequest(message);
  if (legacy !== message) {
    legacy.id = id; // a copy already
    return JSON.stringify(legacy);
  }
  const callerId = message.id;
  message.id = id;
  try {
    return JSON.stringify(message);
  } finally {
    message.id = callerId;
  }
}
