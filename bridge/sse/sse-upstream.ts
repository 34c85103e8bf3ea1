// A remote server of the 2024-11-05 HTTP+SSE transport (`transport: sse`), behind the same Upstream
// interface as the others. Such a server is always of the 2025 era: the connection (sse-connection.ts) is
// opened with initialize and spoken to in the legacy dialect, as a 2025 stdio child is — the event stream,
// like a pipe, does not say which request a message answers, so the gateway's own ids match them, and a
// question the server asks mid-call goes to the one call in flight that may be asked (the MRTR bridge above
// turns it into input_required). When the stream drops, the calls in flight fail at once and the connection
// is opened again with backoff.
import { markFailure } from '../../protocol/failure-mark.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { CancelSignal } from '../../protocol/cancel.js';
import type { Log } from '../../infra/log.js';
import type { HttpUpstreamConfig } from '../remote-config.js';
import { openLegacyLine, type LegacyLine } from '../legacy/index.js';
import { LineUpstream } from '../line-upstream.js';
import type { RequestOptions, UpstreamState } from '../upstream.js';
import { SseConnection } from './sse-connection.js';

/**
 * A `url:` server's settings (http-upstream.ts): `url` is the event stream's (GET), `probeTimeoutMs` the
 * deadline of opening it (up to its endpoint event) and of initialize, `maxMessageBytes` the largest event.
 */
export interface SseUpstreamConfig extends Omit<HttpUpstreamConfig, 'era'> {
  /** servers.<name>.roots: the answer to a roots/list no caller can be asked (none when unset). */
  roots?: readonly JsonObject[] | undefined;
}

const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const FAILS_AT: ReadonlySet<UpstreamState> = new Set(['stopped', 'backing-off', 'unhealthy']);

export class SseUpstream extends LineUpstream {
  private connection: SseConnection | undefined;
  /** Bumped by every run and by close(), so a run that was overtaken drops its result. */
  private generation = 0;

  constructor(
    private readonly config: SseUpstreamConfig,
    log: Log,
  ) {
    super({ ...config, era: 'legacy' }, log, 'event-stream');
  }

  async start(): Promise<void> {
    if (this.supervisor.state !== 'stopped') return;
    await this.run();
  }

  async request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    if (this.supervisor.state !== 'ready') {
      const failure = await this.waitUntilReady(message, options.signal);
      if (failure) return markFailure(failure, 'unreachable');
    }
    // A listen stream lives until its caller closes it.
    return this.intercepted(
      message,
      options,
      message.method === 'subscriptions/listen' ? 0 : this.config.timeoutMs,
      this.dialect!,
    );
  }

  async close(): Promise<void> {
    this.generation++;
    this.supervisor.stop();
    this.connection?.close();
    this.connection = undefined;
    this.pending.failAll(
      (method) =>
        `Upstream '${this.name}' was stopped while handling ${method} (the gateway is shutting down or reloading)`,
    );
  }

  // ---- lifecycle ---------------------------------------------------------------------------------

  private async run(): Promise<void> {
    const generation = ++this.generation;
    this.supervisor.setState('starting');
    this.pending = this.newPending();
    const connection = new SseConnection(
      {
        url: this.config.url,
        headers: this.config.headers,
        maxEventChars: this.config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      },
      {
        message: (value) => this.onMessage(line, value),
        refused: (message, why) => this.onRefused(message, why),
        closed: (why) => {
          if (this.connection === connection) this.dropped(`its event stream closed (${why})`);
        },
      },
      this.log,
    );
    const line = this.connectionLine(connection);
    this.connection = connection;
    try {
      await connection.connect(this.config.probeTimeoutMs);
      const opened = await openLegacyLine(
        line,
        { ...this.config, startupTimeoutMs: this.config.probeTimeoutMs },
        this.log,
      );
      if (opened === 'modern')
        throw new Error(`answered initialize as a 2026-era server; serve it with servers.${this.name}.transport: http`);
      if (generation !== this.generation) return;
      this.dialect = opened;
      this.supervisor.lastError = undefined;
      this.supervisor.ready(true);
      this.log.info(
        { url: this.config.url, protocolVersion: opened.handshake.protocolVersion },
        'upstream ready (HTTP+SSE)',
      );
    } catch (error) {
      if (generation !== this.generation) return;
      connection.close();
      this.dropped(`could not be opened: ${(error as Error).message}`);
    }
  }

  /** The connection is gone: callers in flight fail at once, and a new one is opened after a backoff. */
  private dropped(why: string): void {
    const supervisor = this.supervisor;
    if (FAILS_AT.has(supervisor.state)) return;
    this.generation++;
    this.connection?.close();
    this.connection = undefined;
    const said = `Upstream '${this.name}' (${this.config.url}, HTTP+SSE) ${why}`;
    this.pending.failAll((method) => `${said} while handling ${method}; mcp-gateway reconnects. Retry the request.`, {
      server: this.name,
    });
    supervisor.lastError = said;
    supervisor.failed(
      { fields: { failure: 'unreachable' }, counted: 'failures', backingOff: 'upstream not available; reconnecting' },
      () => {
        supervisor.restarts++;
        void this.run();
      },
    );
  }

  private connectionLine(connection: SseConnection): LegacyLine {
    return this.lineTo({ send: (message) => connection.send(message), alive: () => connection.alive, hint: () => '' });
  }

  protected write(message: unknown): void {
    if (this.connection) this.connection.send(message);
    else this.onRefused(message, 'no connection');
  }

  // ---- messages from the server -------------------------------------------------------------------

  /** A POST the server refused: the request it carried fails now rather than at its timeout. */
  private onRefused(message: unknown, why: string): void {
    const id = isObject(message) ? message.id : undefined;
    this.log.warn(
      { method: isObject(message) ? message.method : undefined, why },
      'the upstream refused a message POSTed to its endpoint',
    );
    if (typeof id === 'number') this.pending.fail(id, `Upstream '${this.name}' (HTTP+SSE) refused the request: ${why}`);
  }

  // ---- waiting for readiness ---------------------------------------------------------------------

  private async waitUntilReady(
    message: JsonRpcRequest,
    signal: CancelSignal | undefined,
  ): Promise<JsonRpcResponse | undefined> {
    const supervisor = this.supervisor;
    const state = await supervisor.settled(Date.now() + this.config.timeoutMs, signal, FAILS_AT);
    if (state === 'ready') return undefined;
    const last = supervisor.lastError;
    if (state === 'stopped') return this.stoppedAnswer(message);
    if (state === 'backing-off' || state === 'unhealthy') {
      const wait = Math.max(0, Math.ceil((supervisor.retryAt - Date.now()) / 100) / 10);
      return errorResponse(
        message.id,
        ErrorCode.InternalError,
        `${last ?? `Upstream '${this.name}' is not available`}; mcp-gateway tries again in ${wait} s`,
        {
          server: this.name,
          state,
        },
      );
    }
    return this.notReadyAnswer(message);
  }
}
