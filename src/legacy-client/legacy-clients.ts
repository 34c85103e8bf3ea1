// 2025-era clients (2025-11-25, 2025-06-18, 2025-03-26) on the same endpoints as modern ones, in front of
// the same modern core. The body decides, per message: modern `_meta` wins; `initialize`, or a request on a
// session (Mcp-Session-Id) without modern `_meta`, takes the 2025 rules here. Each 2025 request becomes a
// modern one (the session supplies its version and capabilities), each modern answer a 2025 one, and a
// modern `input_required` becomes real requests to the client on the POST's stream, whose answers feed
// the retry: a 2025 host gets elicitation from a modern server. With Redis, the session works on every
// replica (session-relay.ts): its GET stream, subscriptions and answers travel between them.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { CancelSignal } from '../../protocol/cancel.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  isValidId,
  parseMessage,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import { MAY_ASK, META, MODERN_REQUEST_METHODS, MODERN_VERSION } from '../../protocol/mcp.js';
import { retryAfterHeaders, retryAfterOf } from '../../protocol/overload.js';
import type { ListenAccess, ListenHub } from '../notify/index.js';
import { GATEWAY_INFO } from '../../infra/version.js';
import { ClientRequests } from './client-requests.js';
import { ExpiringSessions } from './expiring-sessions.js';
import type { EndedSession, SessionRelay } from './session-relay.js';
import { SessionStreams } from './session-streams.js';
import { SessionCodec, type LegacySession } from './session-token.js';

export const LEGACY_CLIENT_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};
const MAX_ROUNDS = 16;
/** Methods whose 2025 and 2026 forms are the same, forwarded to the core. */
const FORWARDED: ReadonlySet<string> = new Set(
  [...MODERN_REQUEST_METHODS].filter((m) => m !== 'subscriptions/listen' && m !== 'server/discover'),
);

export interface LegacyExchange {
  body: unknown;
  sessionHeader: string | undefined;
  /** 'mcp' or the server's name. */
  endpoint: string;
  /** The upstream a GET stream listens to (undefined for /mcp). */
  upstream: string | undefined;
  /** Who is calling (the authorization context). */
  caller: string;
  /** The caller's principal: a GET stream hears of their own connections made or revoked. */
  principal?: string;
  outgoing: ServerResponse;
  signal: CancelSignal;
  headers: Record<string, string>;
  access: ListenAccess | undefined;
  /** One modern request through policy, the upstream, and the caller's view of the answer. */
  execute(
    message: JsonRpcRequest,
    options: { signal?: CancelSignal; onNotification?: (notification: JsonRpcNotification) => void },
  ): Promise<JsonRpcResponse>;
}

export interface LegacyClientsOptions {
  secret: Buffer;
  sessionTtlMs: number;
  listen: ListenHub;
  /** Shares sessions between replicas through Redis; absent: each replica serves its own streams and questions. */
  relay?: SessionRelay;
  log: Log;
}

export class LegacyClients {
  private readonly codec: SessionCodec;
  /** Sessions ended by DELETE (here, or on another replica), until they would have expired anyway. */
  private readonly ended = new ExpiringSessions<true>();
  private readonly streams: SessionStreams;
  private readonly requests: ClientRequests;

  constructor(private readonly options: LegacyClientsOptions) {
    this.codec = new SessionCodec(options.secret);
    this.streams = new SessionStreams(options.listen, options.relay, options.log);
    this.requests = new ClientRequests(options.relay, options.log);
    options.relay?.attach({
      event: (session, event) => {
        if (event.kind === 'answer') this.requests.deliver(session, event.message);
        else this.streams.heard(session, event);
      },
      ended: (sessions) => this.markEnded(sessions),
    });
  }

  /** Whether a POST body (with its session header) is a 2025 client's. */
  claims(body: unknown, sessionHeader: string | undefined): boolean {
    if (Array.isArray(body)) return sessionHeader !== undefined;
    if (!isObject(body)) return false;
    const params = isObject(body.params) ? body.params : undefined;
    const meta = params && isObject(params._meta) ? params._meta : undefined;
    if (meta && META.protocolVersion in meta) return false; // modern _meta wins
    return body.method === 'initialize' || sessionHeader !== undefined;
  }

  async post(exchange: LegacyExchange): Promise<void> {
    const { body, outgoing } = exchange;
    if (Array.isArray(body))
      return json(
        outgoing,
        400,
        errorResponse(null, ErrorCode.InvalidRequest, 'Batches are not supported: send one JSON-RPC message per POST'),
        exchange.headers,
      );
    const message = body as JsonObject;
    const invalid = envelopeProblem(message);
    if (invalid)
      return json(
        outgoing,
        400,
        errorResponse(isValidId(message.id) ? message.id : null, ErrorCode.InvalidRequest, invalid),
        exchange.headers,
      );
    if (message.method === 'initialize') return this.initialize(exchange, message);
    const session = this.session(exchange);
    if (!session) return this.unknownSession(exchange);
    if (typeof message.method !== 'string') {
      // The client answering a request this gateway (or another replica) sent it.
      try {
        await this.requests.answer(session.id, message);
      } catch (error) {
        const why =
          `This answer could not be passed to the replica that asked for it: ${(error as Error).message}. ` +
          `Send it again once Redis is back.`;
        return json(outgoing, 503, errorResponse(null, ErrorCode.InternalError, why), exchange.headers);
      }
      outgoing.writeHead(202, exchange.headers).end();
      return;
    }
    // The envelope passed: a method with an id is a request, one without a notification.
    const parsed = parseMessage(message);
    if (parsed.kind !== 'request') {
      outgoing.writeHead(202, exchange.headers).end(); // notifications/initialized and the like
      return;
    }
    const request = parsed.message;
    switch (request.method) {
      case 'ping':
      case 'logging/setLevel':
        return json(outgoing, 200, { jsonrpc: '2.0', id: request.id, result: {} }, exchange.headers);
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return json(outgoing, 200, await this.streams.subscribe(session, request), exchange.headers);
    }
    if (!FORWARDED.has(request.method)) {
      return json(
        outgoing,
        200,
        errorResponse(request.id, ErrorCode.MethodNotFound, `Method not found: ${request.method}`),
        exchange.headers,
      );
    }
    return this.forward(exchange, session, request);
  }

  /** GET with a session: the stream of list changes and subscribed resource updates. */
  stream(exchange: LegacyExchange): void {
    const session = this.session(exchange);
    if (!session) return this.unknownSession(exchange);
    for (const [name, value] of Object.entries(exchange.headers)) exchange.outgoing.setHeader(name, value);
    this.streams.open(session, exchange.outgoing, exchange.upstream, exchange.access, exchange.principal);
  }

  /** DELETE: the session ends; its id is refused from now on (on every replica, with Redis). */
  async end(exchange: LegacyExchange): Promise<void> {
    const session = this.session(exchange);
    if (!session) return this.unknownSession(exchange);
    this.markEnded([{ session: session.id, expiresAt: session.expiresAt }]);
    try {
      await this.options.relay?.end(session.id, session.expiresAt);
    } catch (error) {
      const why =
        `The session ended on this replica only: ${(error as Error).message}. Send DELETE again once ` +
        `Redis is back.`;
      return json(exchange.outgoing, 503, errorResponse(null, ErrorCode.InternalError, why), exchange.headers);
    }
    exchange.outgoing.writeHead(200, exchange.headers).end();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private markEnded(sessions: readonly EndedSession[]): void {
    for (const { session, expiresAt } of sessions) {
      this.ended.set(session, true, expiresAt);
      this.streams.end(session);
    }
  }

  private async initialize(exchange: LegacyExchange, message: JsonObject): Promise<void> {
    const params = isObject(message.params) ? message.params : {};
    const requested = typeof params.protocolVersion === 'string' ? params.protocolVersion : undefined;
    const protocolVersion =
      requested && LEGACY_CLIENT_VERSIONS.includes(requested) ? requested : LEGACY_CLIENT_VERSIONS[0]!;
    const capabilities = isObject(params.capabilities) ? params.capabilities : {};
    const discover = await exchange.execute(
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'server/discover',
        params: { _meta: { [META.protocolVersion]: MODERN_VERSION, [META.clientCapabilities]: capabilities } },
      },
      { signal: exchange.signal },
    );
    const id = message.id as JsonRpcRequest['id'];
    if (!('result' in discover)) return json(exchange.outgoing, 200, { ...discover, id }, exchange.headers);
    const offered = isObject(discover.result.capabilities) ? discover.result.capabilities : {};
    const served: JsonObject = { logging: {} };
    for (const key of ['tools', 'prompts', 'completions'])
      if (key in offered) served[key] = key === 'completions' ? {} : { listChanged: true };
    // Resource subscriptions are served by the gateway itself (over the session's GET stream).
    if ('resources' in offered) served.resources = { subscribe: true, listChanged: true };
    const meta = isObject(discover.result._meta) ? discover.result._meta : {};
    const serverInfo = isObject(meta[META.serverInfo]) ? meta[META.serverInfo] : GATEWAY_INFO;
    const session: LegacySession = {
      id: randomBytes(12).toString('base64url'),
      protocolVersion,
      capabilities,
      clientInfo: isObject(params.clientInfo) ? params.clientInfo : undefined,
      endpoint: exchange.endpoint,
      caller: exchange.caller,
      expiresAt: Date.now() + this.options.sessionTtlMs,
    };
    const result: JsonObject = { protocolVersion, capabilities: served, serverInfo };
    if (typeof discover.result.instructions === 'string') result.instructions = discover.result.instructions;
    json(
      exchange.outgoing,
      200,
      { jsonrpc: '2.0', id, result },
      { ...exchange.headers, 'mcp-session-id': this.codec.mint(session) },
    );
  }

  /** The session a request names, if it is good here and for this caller. */
  private session(exchange: LegacyExchange): LegacySession | undefined {
    const token = exchange.sessionHeader;
    if (token === undefined) return undefined;
    const session = this.codec.open(token);
    if (
      !session ||
      session.endpoint !== exchange.endpoint ||
      session.caller !== exchange.caller ||
      this.ended.has(session.id)
    )
      return undefined;
    return session;
  }

  private unknownSession(exchange: LegacyExchange): void {
    const why =
      exchange.sessionHeader === undefined
        ? 'this request needs an Mcp-Session-Id: send initialize first'
        : 'Session not found (it ended, expired, or belongs to another endpoint or caller): send initialize again';
    json(exchange.outgoing, 404, errorResponse(null, ErrorCode.InvalidRequest, why), exchange.headers);
  }

  /** A 2025 request through the modern core; its input requests asked of the client on the POST's stream. */
  private async forward(exchange: LegacyExchange, session: LegacySession, request: JsonRpcRequest): Promise<void> {
    const { outgoing, signal } = exchange;
    const params = request.params ?? {};
    const meta = isObject(params._meta) ? params._meta : {};
    const modernMeta = {
      ...meta,
      [META.protocolVersion]: MODERN_VERSION,
      [META.clientCapabilities]: session.capabilities,
    };
    // A fresh copy for each attempt: the core may rewrite names in the params it is given (on /mcp).
    const attemptOf = (extra: JsonObject): JsonRpcRequest => ({
      jsonrpc: '2.0',
      id: request.id,
      method: request.method,
      params: { ...params, _meta: { ...modernMeta }, ...extra },
    });
    const modern = attemptOf({});
    const streaming = meta.progressToken !== undefined || MAY_ASK.has(request.method);
    if (!streaming) {
      const response = await exchange.execute(modern, { signal });
      if (!outgoing.destroyed) jsonAnswer(outgoing, toLegacy(response, request.id), response, exchange.headers);
      return;
    }
    // The stream opens with its first message, so a refusal that comes before any (a full upstream: 503 +
    // Retry-After) can still be answered with its own status, as the modern path does.
    let opened = false;
    const send = (message: unknown): void => {
      if (outgoing.destroyed) return;
      if (!opened) {
        opened = true;
        outgoing.writeHead(200, { ...exchange.headers, ...SSE_HEADERS });
      }
      outgoing.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    };
    let attempt = modern;
    for (let round = 0; ; round++) {
      // A client that does not read its stream misses progress rather than have the gateway buffer it all.
      const response = await exchange.execute(attempt, {
        signal,
        onNotification: (notification) => outgoing.writableLength < 1024 * 1024 && send(notification),
      });
      if (signal.aborted || outgoing.destroyed) return;
      const result = 'result' in response ? response.result : undefined;
      if (result?.resultType !== 'input_required' || round >= MAX_ROUNDS) {
        if (!opened && retryAfterOf(response) !== undefined)
          return jsonAnswer(outgoing, toLegacy(response, request.id), response, exchange.headers);
        send(toLegacy(response, request.id));
        outgoing.end();
        return;
      }
      const answers = await this.requests.ask(
        session.id,
        isObject(result.inputRequests) ? result.inputRequests : {},
        send,
        signal,
      );
      if ('error' in answers) {
        send(errorResponse(request.id, ErrorCode.InternalError, answers.error));
        outgoing.end();
        return;
      }
      attempt = attemptOf(
        typeof result.requestState === 'string'
          ? { inputResponses: answers.answers, requestState: result.requestState }
          : { inputResponses: answers.answers },
      );
    }
  }
}

/** What is wrong with a 2025 message's JSON-RPC envelope, if anything. */
function envelopeProblem(message: JsonObject): string | undefined {
  if (message.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if (typeof message.method === 'string') {
    if ('id' in message && !isValidId(message.id)) return 'id must be a string or an integer';
    if (message.method === 'initialize' && !('id' in message)) return 'initialize is a request: give it an id';
    if (message.params !== undefined && !isObject(message.params)) return 'params must be an object';
    return undefined;
  }
  if (!isValidId(message.id) || !('result' in message || 'error' in message))
    return 'not a JSON-RPC request, notification or response';
  return undefined;
}

/** A modern answer in 2025 form: the fields 2025 clients do not know are left out. */
function toLegacy(response: JsonRpcResponse, id: JsonRpcRequest['id']): JsonRpcResponse {
  if (!('result' in response)) return { ...response, id };
  const { resultType: _type, ttlMs: _ttl, cacheScope: _scope, ...result } = response.result;
  return { jsonrpc: '2.0', id, result };
}

/** An answer as JSON: 503 with Retry-After when it is a capacity refusal (overload.ts), else 200. */
function jsonAnswer(
  outgoing: ServerResponse,
  body: JsonRpcResponse,
  response: JsonRpcResponse,
  headers: Record<string, string>,
): void {
  const retry = retryAfterHeaders(response);
  json(outgoing, retry ? 503 : 200, body, retry ? { ...headers, ...retry } : headers);
}

function json(outgoing: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  const text = Buffer.from(JSON.stringify(body));
  outgoing.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': text.length });
  outgoing.end(text);
}
