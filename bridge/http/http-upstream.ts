// A remote MCP server over Streamable HTTP, behind the same Upstream interface as a stdio child: decides
// the server's era (probe once, remember, probe again after failures), sends modern requests as one POST
// each through a keep-alive pool, hands legacy ones to a 2025 session, and keeps a server that cannot be
// reached (or refuses the gateway's credentials) out of the request path with backoff until it answers.
import { markFailure } from '../../protocol/failure-mark.js';
import {
  ErrorCode,
  errorResponse,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { CancelSignal } from '../../protocol/cancel.js';
import { UPSTREAM_STATUS, type MarkedResponse } from '../../protocol/error-status.js';
import type { Log } from '../../infra/log.js';
import { overloadedResponse } from '../../protocol/overload.js';
import { META, MODERN_VERSION } from '../../protocol/mcp.js';
import { SupervisedUpstream } from '../supervised-upstream.js';
import { modernDialect, type Dialect } from '../dialect.js';
import { HttpEndpoint } from './http-endpoint.js';
import { looksLegacy, probeVerdict } from './http-era.js';
import type { HttpExchange, StreamPeer } from './http-exchange.js';
import {
  busyForSeconds,
  describeExchange,
  displayUrl,
  errorBodyOf,
  exchangeFailure,
  failureKind,
  failureResponse,
  upstream,
  UpstreamFailure,
  type FailureKind,
  type Where,
} from './http-failures.js';
import { EraMismatch, LegacyHttpSession } from './http-legacy-session.js';
import { appendModernHeaders, appendTraceHeaders } from './mcp-headers.js';
import type { Era, RequestOptions, UpstreamState, UpstreamStatus } from '../upstream.js';
import { speaksHttpSse, SseUpstream } from '../sse/index.js';
import type { HttpUpstreamConfig } from '../remote-config.js';

export type { HttpUpstreamConfig };

const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** A modern request answered like a 2025 server re-probes the era at most this often. */
const REPROBE_INTERVAL_MS = 1_000;
/** A server known to be down or refusing the gateway fails callers at once: they never wait on a dead server. */
const FAILS_AT: ReadonlySet<UpstreamState> = new Set(['stopped', 'backing-off', 'unhealthy']);

export class HttpUpstream extends SupervisedUpstream implements StreamPeer {
  private endpoint: HttpEndpoint | undefined;
  private session: LegacyHttpSession | undefined;
  private readonly where: Where;
  private probedAt = 0;
  /** Bumped by every run and by close(), so a run that was overtaken drops its result. */
  private generation = 0;
  private readonly modern: Dialect;
  /** The probe was refused with a bare HTTP status (no JSON-RPC answer): maybe an HTTP+SSE server. */
  private probeRefused = false;
  /** Set when `era: auto` found a 2024-11-05 HTTP+SSE server at the URL: everything goes to it from then on. */
  private sse: SseUpstream | undefined;

  constructor(
    private readonly config: HttpUpstreamConfig,
    log: Log,
  ) {
    super(config, log);
    this.modern = modernDialect(log);
    this.where = {
      name: config.name,
      url: displayUrl(new URL(config.url)),
      timeoutMs: config.timeoutMs,
      maxBytes: config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    };
  }

  async start(): Promise<void> {
    if (this.supervisor.state !== 'stopped') return;
    this.endpoint = new HttpEndpoint(this.config.url, this.config.headers, {
      connectTimeoutMs: this.config.probeTimeoutMs,
    });
    if (this.endpoint.ignoredHeaders.length) {
      this.log.warn(
        { headers: this.endpoint.ignoredHeaders },
        `servers.${this.name}.headers: these are set by mcp-gateway itself and were ignored`,
      );
    }
    await this.run();
  }

  override status(): UpstreamStatus {
    return this.sse ? this.sse.status() : super.status();
  }

  async request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    if (this.sse) return this.sse.request(message, options);
    if (this.supervisor.state !== 'ready') {
      const failure = await this.waitUntilReady(message, options.signal);
      if (failure) return markFailure(failure, 'unreachable');
      const found = this.sse as SseUpstream | undefined; // found while this request waited
      if (found) return found.request(message, options);
    }
    // A 2025 server is served through its session (the legacy adapter); nothing else here asks the era.
    if (this.session) return this.legacyRequest(message, options, true);
    return this.modernRequest(message, options);
  }

  async close(): Promise<void> {
    this.generation++;
    this.supervisor.stop();
    await this.sse?.close();
    const { session, endpoint } = this;
    this.session = undefined;
    this.endpoint = undefined;
    await session?.close();
    await endpoint?.close();
  }

  // ---- modern requests ---------------------------------------------------------------------------

  private async modernRequest(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    const endpoint = this.endpoint!;
    const callerId = message.id;
    const headers = appendTraceHeaders(
      appendModernHeaders(endpoint.headers(), message, options.forwardHeaders),
      options,
    );
    if (options.authorization !== undefined) headers.push('authorization', options.authorization);
    const exchange = await endpoint.send('POST', headers, JSON.stringify(message), {
      // A listen stream lives until the caller closes it.
      timeoutMs: message.method === 'subscriptions/listen' ? 0 : this.config.timeoutMs,
      maxBytes: this.where.maxBytes,
      signal: options.signal,
      expectId: callerId,
      onNotification: options.onNotification,
      onStreamStart: options.onStreamStart,
      peer: this,
    });
    if (exchange.end === 'response') {
      const response = exchange.response!;
      response.id = callerId;
      this.modern.complete(message.method, response);
      return response;
    }
    if (looksLegacy(exchange) && this.config.era === 'auto' && this.supervisor.state === 'ready') {
      // The server behind the URL may have been replaced by a 2025 one: a refused request was not run.
      const era = await this.reprobe();
      if (era === 'legacy' && this.supervisor.state === 'ready') return this.legacyRequest(message, options, false);
    }
    const busyFor = busyForSeconds(exchange);
    if (busyFor !== undefined) {
      const said = describeExchange(this.where, message.method, exchange);
      return overloadedResponse(
        callerId,
        `${said}; it is busy and asked to be sent this again in ${busyFor} s`,
        { server: this.name, url: this.where.url, httpStatus: 503, reason: 'upstream_busy' },
        busyFor,
      );
    }
    const failure: MarkedResponse | undefined = errorBodyOf(exchange, callerId);
    if (failure) {
      failure[UPSTREAM_STATUS] = exchange.status; // what httpStatusOf needs to tell a -32602's kind
      return failure;
    }
    if (this.supervisor.state === 'stopped')
      return failureResponse(
        callerId,
        this.where,
        `Upstream '${this.name}' was stopped while handling ${message.method} (the gateway is shutting down or ` +
          `reloading)`,
      );
    return exchangeFailure(this.where, message.method, callerId, exchange, (said) => this.fail('unreachable', said));
  }

  // ---- legacy requests ---------------------------------------------------------------------------

  private async legacyRequest(
    message: JsonRpcRequest,
    options: RequestOptions,
    mayReprobe: boolean,
  ): Promise<JsonRpcResponse> {
    const answer = await this.session!.request(message, options);
    if (!(answer instanceof EraMismatch)) return answer;
    if (mayReprobe && this.config.era === 'auto' && this.supervisor.state === 'ready') {
      // Refused as only a 2026-era server refuses, so not run: ask again in the era the server speaks now.
      const era = await this.reprobe();
      if (era === 'modern' && this.supervisor.state === 'ready') return this.modernRequest(message, options);
    }
    return answer.response;
  }

  /**
   * Notifications on a modern request's stream belong to its caller (progress, log messages, and on a
   * subscriptions/listen stream the changes it asked for); list changes are also announced to listeners.
   */
  onStreamMessage(message: JsonRpcRequest | JsonRpcNotification, exchange: HttpExchange): void {
    const method = message.method;
    if ('id' in message) {
      // The 2026 revision forbids requests on response streams (they travel as input_required results).
      this.log.warn({ method }, 'ignored a request the upstream sent on a response stream');
      return;
    }
    if (method.endsWith('/list_changed') || method === 'notifications/resources/updated')
      this.events.emit('listChanged', message);
    exchange.onNotification?.(message);
  }

  // ---- lifecycle ---------------------------------------------------------------------------------

  private async run(): Promise<void> {
    const generation = ++this.generation;
    this.supervisor.setState('starting');
    const session = this.session;
    this.session = undefined;
    if (session) void session.close().catch(() => {});
    try {
      if (this.era === undefined) {
        const era = await this.probe();
        if (generation !== this.generation) return;
        this.era = era;
        this.log.info({ era }, `upstream speaks the ${era} revision`);
      }
      // The one place the era decides how the server is spoken to: a 2025 one gets a session.
      if (this.era === 'legacy') {
        const fresh = new LegacyHttpSession(
          this.endpoint!,
          { ...this.where, clientInfo: this.config.clientInfo, legacyTtlMs: this.config.legacyTtlMs },
          this.log,
          this.events,
          {
            broken: (kind, message) => {
              if (this.session === fresh) this.fail(kind, message);
            },
          },
        );
        try {
          await fresh.open();
        } catch (error) {
          // Refused both a modern POST and initialize with bare statuses: maybe the 2024 HTTP+SSE transport.
          if (this.probeRefused && this.config.era === 'auto' && (await this.switchedToSse(generation))) return;
          throw error;
        }
        if (generation !== this.generation) {
          void fresh.close().catch(() => {});
          return;
        }
        this.session = fresh;
      }
      this.supervisor.lastError = undefined;
      this.supervisor.ready(true);
      this.log.info({ era: this.era, url: this.where.url }, 'upstream ready');
    } catch (error) {
      if (generation !== this.generation) return;
      const failure =
        error instanceof UpstreamFailure
          ? error
          : new UpstreamFailure(`${upstream(this.where)}: ${(error as Error).message}`, 'protocol');
      this.fail(failure.kind, failure.message);
    }
  }

  private async probe(): Promise<Era> {
    const endpoint = this.endpoint!;
    this.probedAt = Date.now();
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'server/discover',
      params: {
        _meta: {
          [META.protocolVersion]: MODERN_VERSION,
          [META.clientCapabilities]: {},
          [META.clientInfo]: this.config.clientInfo,
        },
      },
    });
    const headers = endpoint.headers();
    headers.push('mcp-protocol-version', MODERN_VERSION, 'mcp-method', 'server/discover');
    const exchange = await endpoint.send('POST', headers, body, {
      timeoutMs: this.config.probeTimeoutMs,
      maxBytes: this.where.maxBytes,
      expectId: 0,
    });
    const verdict = probeVerdict(exchange);
    this.probeRefused = exchange.end === 'status';
    if (verdict === 'no-verdict') {
      const message =
        exchange.end === 'timeout'
          ? `${upstream(this.where)} did not answer server/discover within ${this.config.probeTimeoutMs} ms ` +
            `(servers.${this.name}.probeTimeoutMs)`
          : describeExchange(this.where, 'server/discover', exchange);
      throw new UpstreamFailure(message, failureKind(exchange));
    }
    return verdict;
  }

  /**
   * A server that refused the modern POST with a bare status may be of the 2024-11-05 HTTP+SSE transport:
   * when a GET of the URL opens an event stream with an endpoint event, it is served as `transport: sse`
   * from now on (this upstream hands every request, and its events, to that one).
   */
  private async switchedToSse(generation: number): Promise<boolean> {
    const settings = { url: this.config.url, headers: this.config.headers, maxEventChars: this.where.maxBytes };
    if (!(await speaksHttpSse(settings, this.config.probeTimeoutMs, this.log)) || generation !== this.generation)
      return false;
    this.log.info(
      { url: this.where.url },
      'upstream speaks the 2024-11-05 HTTP+SSE transport; serving it so (set transport: sse to skip this probe)',
    );
    const sse = new SseUpstream({ ...this.config }, this.log);
    for (const event of ['listChanged', 'state'])
      sse.events.on(event, (value: unknown) => this.events.emit(event, value));
    this.sse = sse;
    this.generation++; // this upstream's own run ends here: the SSE upstream's supervisor takes over
    await sse.start();
    this.supervisor.ready(true); // requests that waited for this start go on, to the SSE upstream
    return true;
  }

  /** Probes the era again at once (not counted as a failure); resolves with the new era, if any. */
  private async reprobe(): Promise<Era | undefined> {
    if (this.supervisor.state === 'ready' && Date.now() - this.probedAt >= REPROBE_INTERVAL_MS) {
      this.log.warn({ era: this.era }, 'a request was answered like a server of the other era; probing the era again');
      this.era = undefined;
      void this.run();
    }
    if (this.supervisor.state === 'starting') await this.supervisor.nextChange(this.config.timeoutMs);
    return this.supervisor.state === 'ready' ? this.era : undefined;
  }

  /** The server cannot serve requests now: back off (or mark it unhealthy) and try again later. */
  private fail(kind: FailureKind, message: string): void {
    const supervisor = this.supervisor;
    if (FAILS_AT.has(supervisor.state)) return;
    this.generation++;
    supervisor.lastError = message;
    if (this.config.era === 'auto') this.era = undefined; // whatever answers next may be another server
    supervisor.failed(
      { fields: { failure: kind }, counted: 'failures', backingOff: 'upstream not available; retrying' },
      () => {
        supervisor.restarts++;
        void this.run();
      },
    );
  }

  // ---- waiting for readiness ---------------------------------------------------------------------

  /**
   * While the upstream is starting, a request waits for it (up to its timeout); a server known to be
   * down or refusing the gateway fails the request at once, so callers never wait on a dead server.
   */
  private async waitUntilReady(
    message: JsonRpcRequest,
    signal: CancelSignal | undefined,
  ): Promise<JsonRpcResponse | undefined> {
    const supervisor = this.supervisor;
    switch (await supervisor.settled(Date.now() + this.config.timeoutMs, signal, FAILS_AT)) {
      case 'ready':
        return undefined;
      case 'stopped':
        return failureResponse(
          message.id,
          this.where,
          `Upstream '${this.name}' is stopped (the gateway is shutting down or reloading)`,
        );
      case 'backing-off':
      case 'unhealthy':
        return failureResponse(message.id, this.where, this.unavailableMessage());
    }
    const lastError = supervisor.lastError;
    return errorResponse(
      message.id,
      ErrorCode.InternalError,
      `${upstream(this.where)} was not ready within ${this.config.timeoutMs} ms (state: ` +
        `${supervisor.state}${lastError ? `; last error: ${lastError}` : ''})`,
      { server: this.name, url: this.where.url, state: supervisor.state },
    );
  }

  private unavailableMessage(): string {
    const wait = Math.max(0, Math.ceil((this.supervisor.retryAt - Date.now()) / 100) / 10);
    const last = this.supervisor.lastError ?? `${upstream(this.where)} is not available.`;
    if (this.supervisor.state === 'unhealthy') {
      const policy = this.config.backoff;
      return (
        `${upstream(this.where)} is marked unhealthy after ${policy.crashLimit} failures within ` +
        `${policy.windowMs / 1000} s; mcp-gateway tries again in ${wait} s. Last error: ${last}`
      );
    }
    return `${last} mcp-gateway tries again in ${wait} s; until then requests to '${this.name}' fail at once.`;
  }
}
