// A supervised stdio child shared by every caller: finds out its era once, speaks to it in that era's dialect
// (the 2025 one, bridge/legacy/, opens it with initialize), multiplexes requests onto it, and restarts it
// with backoff when it dies.
import { meaningfulStderrLine } from './stderr-line.js';
import { markFailure } from '../../protocol/failure-mark.js';
import {
  ErrorCode,
  errorResponse,
  isModernError,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { CancelSignal } from '../../protocol/cancel.js';
import type { Log } from '../../infra/log.js';
import { META, MODERN_VERSION, type ServerInfo } from '../../protocol/mcp.js';
import type { BackoffPolicy } from '../backoff.js';
import { modernDialect, type Dialect } from '../dialect.js';
import { openLegacyLine, type LegacyLine } from '../legacy/index.js';
import { LineUpstream, type LineConfig } from '../line-upstream.js';
import type { Era, RequestOptions, UpstreamState } from '../upstream.js';
import { StdioProcess, type ExitInfo, type StdioCommand } from './stdio-process.js';

export interface StdioUpstreamConfig extends StdioCommand, LineConfig {
  era: Era | 'auto';
  probeTimeoutMs: number;
  startupTimeoutMs: number;
  /** ttlMs given to a legacy child's cacheable results. */
  legacyTtlMs: number;
  shutdownGraceMs: number;
  backoff: BackoffPolicy;
  clientInfo: ServerInfo;
}

const LEADING_ID = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+)/;
const TRAILING_ID = /,\s*"id"\s*:\s*(\d+)\s*\}\s*$/;
/** States that fail a waiting caller at once; while the child backs off, callers wait for its restart. */
const FAILS_AT: ReadonlySet<UpstreamState> = new Set(['stopped', 'unhealthy']);

export class StdioUpstream extends LineUpstream {
  /** One per upstream, so a missing field is logged once however often the child restarts. */
  private readonly modern: Dialect;
  private process: StdioProcess | undefined;
  /** Set while the era probe runs: an exit then means "legacy", not a crash. */
  private probing = false;
  /** The era came from silence or an exit during the probe, not from an answer: re-probe if it fails. */
  private eraGuessed = false;

  constructor(
    private readonly config: StdioUpstreamConfig,
    log: Log,
  ) {
    super(config, log, 'stdout');
    this.modern = modernDialect(log);
  }

  async start(): Promise<void> {
    if (this.supervisor.state !== 'stopped') return;
    await this.run();
  }

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    // a listen lives until its caller closes it
    const timeoutMs = message.method === 'subscriptions/listen' ? 0 : this.config.timeoutMs;
    const dialect = this.dialect;
    // A ready child and a dialect that sends as it is (a 2026 server): the request goes out at once, and its
    // caller awaits the answer's own promise, with no async frame of this method's around it.
    if (this.supervisor.state !== 'ready' || dialect === undefined || dialect.intercept !== undefined)
      return this.requestWhenReady(message, options, timeoutMs);
    try {
      return this.dispatch(message, options, timeoutMs, dialect);
    } catch (error) {
      return Promise.reject(error); // as from an async method: the layers above count a request out on settling
    }
  }

  private async requestWhenReady(
    message: JsonRpcRequest,
    options: RequestOptions,
    listenOrTimeoutMs: number,
  ): Promise<JsonRpcResponse> {
    let timeoutMs = listenOrTimeoutMs;
    if (this.supervisor.state !== 'ready') {
      // Waiting for a (re)start counts against the request's own timeout.
      const deadline = Date.now() + this.config.timeoutMs;
      const failure = await this.waitUntilReady(message, deadline, options.signal);
      if (failure) return markFailure(failure, 'unreachable');
      if (timeoutMs > 0) timeoutMs = Math.max(1, deadline - Date.now());
    }
    return this.intercepted(message, options, timeoutMs, this.dialect!);
  }

  async close(): Promise<void> {
    this.supervisor.stop();
    const child = this.process;
    if (child) await child.stop(this.config.shutdownGraceMs);
  }

  // ---- lifecycle ---------------------------------------------------------------------------------

  private async run(): Promise<void> {
    const supervisor = this.supervisor;
    supervisor.setState('starting');
    const child = this.spawn();
    try {
      if (this.era === undefined) {
        const verdict = await this.probe(child);
        // A command that could not start has no era to guess: its exit (onExit) says why and backs off.
        if (!child.alive && (await child.exited).spawnError !== undefined) return;
        this.era = verdict.era;
        this.eraGuessed = verdict.guessed;
        this.log.info({ era: this.era, guessed: verdict.guessed }, `upstream speaks the ${this.era} revision`);
        if (!child.alive) {
          // Some legacy servers exit on any request before initialize: start a fresh one.
          await child.exited;
          if (supervisor.state === 'starting') await this.run();
          return;
        }
      }
      const dialect = await this.dialectFor(this.era, child);
      if (!child.alive || supervisor.state !== 'starting') return;
      this.dialect = dialect;
      supervisor.ready(false);
      this.log.info({ childPid: child.pid, era: this.era }, 'upstream ready');
    } catch (error) {
      // When the child died, its exit already said why; otherwise the handshake failed on a live child.
      if (child.alive) supervisor.lastError = (error as Error).message;
      this.log.error({ err: (error as Error).message }, 'upstream failed to start');
      // A verdict that came from silence or an exit, not an answer, is not kept past a failed start.
      if (this.eraGuessed && this.config.era === 'auto') this.era = undefined;
      // The exit handler decides on the restart.
      await child.stop(this.config.shutdownGraceMs);
    }
  }

  /**
   * The one place the child's era matters: a 2026 server is spoken to as it is; a 2025 one gets a session
   * (initialize) and the legacy dialect, unless its answer to initialize shows it is modern after all.
   */
  private async dialectFor(era: Era, child: StdioProcess): Promise<Dialect> {
    if (era === 'modern') return this.modern;
    const opened = await openLegacyLine(this.childLine(child), this.config, this.log);
    if (opened !== 'modern') return opened;
    // A slow modern server missed the probe; its answer to initialize says what it is.
    this.era = 'modern';
    this.eraGuessed = false;
    this.log.info({}, 'upstream answered initialize as a modern server; serving it as modern');
    return this.modern;
  }

  /** The child as the 2025 session sees it. */
  private childLine(child: StdioProcess): LegacyLine {
    return this.lineTo({
      send: (message) => child.send(message),
      alive: () => child.alive,
      hint: () => stderrHint(child),
    });
  }

  private spawn(): StdioProcess {
    this.pending = this.newPending();
    const child = new StdioProcess(this.config, this.log, {
      message: (message) => this.onMessage(line, message),
      oversized: (bytes, head, tail) => this.onOversized(bytes, head, tail),
      exit: (info) => this.onExit(child, info),
    });
    const line = this.childLine(child);
    this.process = child;
    return child;
  }

  protected write(message: unknown): void {
    // A lone request (the gateway otherwise idle) goes out at once; under load, requests are batched per turn.
    this.process?.send(message, this.pending.waitingForAnswers <= 1);
  }

  /** The child's era; `guessed` when it came from silence or an exit rather than an answer. */
  private async probe(child: StdioProcess): Promise<{ era: Era; guessed: boolean }> {
    this.probing = true;
    const started = Date.now();
    try {
      const params = {
        _meta: {
          [META.protocolVersion]: MODERN_VERSION,
          [META.clientCapabilities]: {},
          [META.clientInfo]: this.config.clientInfo,
        },
      };
      const response = await this.pending.dispatch(
        { jsonrpc: '2.0', id: 0, method: 'server/discover', params },
        { timeoutMs: this.config.probeTimeoutMs },
      );
      if (!child.alive) return { era: 'legacy', guessed: true };
      if ('result' in response && Array.isArray(response.result.supportedVersions))
        return { era: 'modern', guessed: false };
      if ('error' in response && isModernError(response.error)) return { era: 'modern', guessed: false };
      // No answer in time is a guess; an answer that is not modern is a verdict.
      return { era: 'legacy', guessed: Date.now() - started >= this.config.probeTimeoutMs };
    } finally {
      this.probing = false;
    }
  }

  private onExit(child: StdioProcess, info: ExitInfo): void {
    const how = describeExit(info);
    this.pending.failAll(
      (method) =>
        `Upstream '${this.name}' ${how} while handling ${method}; mcp-gateway is restarting it. Retry the request.`,
      {
        server: this.name,
        exitCode: info.code,
        signal: info.signal,
      },
    );
    const supervisor = this.supervisor;
    if (child !== this.process || supervisor.state === 'stopped') return;
    this.process = undefined;
    // run() starts the legacy child (a command that could not start has none)
    if (this.probing && info.spawnError === undefined) return;

    const stderr = meaningfulStderrLine(child.recentStderr());
    supervisor.lastError = info.spawnError ?? supervisor.lastError ?? `${how}${stderr ? `: ${stderr}` : ''}`;
    supervisor.restarts++;
    supervisor.failed({ fields: { exit: info }, counted: 'exits', backingOff: 'upstream exited; restarting' }, () => {
      supervisor.lastError = undefined;
      void this.run();
    });
  }

  // ---- messages from the child -------------------------------------------------------------------

  private onOversized(bytes: number, head: string, tail: string): void {
    // Only an id in the envelope's first or last key counts: the same text deep inside a result must not.
    // A child's own request (it has a method) may carry the same number as one of ours.
    const id = /"method"\s*:/.test(head) ? undefined : (LEADING_ID.exec(head)?.[1] ?? TRAILING_ID.exec(tail)?.[1]);
    const limit = `servers.${this.name}.maxLineBytes (${this.config.maxLineBytes} bytes)`;
    this.log.warn({ bytes, head: head.slice(0, 120) }, `dropped a stdout line larger than ${limit}`);
    if (id !== undefined) {
      this.pending.fail(
        Number(id),
        `Upstream '${this.name}' answered with ${bytes} bytes, more than ${limit}; raise that setting to accept it.`,
      );
    }
  }

  // ---- waiting for readiness ---------------------------------------------------------------------

  /** Waits for the child to be ready; resolves with an error response when it will not be in time. */
  private async waitUntilReady(
    message: JsonRpcRequest,
    deadline: number,
    signal: CancelSignal | undefined,
  ): Promise<JsonRpcResponse | undefined> {
    const supervisor = this.supervisor;
    const state = await supervisor.settled(deadline, signal, FAILS_AT);
    const lastError = supervisor.lastError;
    switch (state) {
      case 'ready':
        return undefined;
      case 'stopped':
        return this.stoppedAnswer(message);
      case 'unhealthy':
        return errorResponse(
          message.id,
          ErrorCode.InternalError,
          `Upstream '${this.name}' is unhealthy: it exited ${this.config.backoff.crashLimit} times within ` +
            `${this.config.backoff.windowMs / 1000} s` +
            `${lastError ? ` (last: ${lastError})` : ''}. mcp-gateway retries at ` +
            `${new Date(supervisor.retryAt).toISOString()}; ` +
            `check servers.${this.name} (command, args, cwd, env) and the server's stderr in the gateway log.`,
          { server: this.name, state },
        );
    }
    return this.notReadyAnswer(message);
  }
}

function describeExit(info: ExitInfo): string {
  if (info.spawnError) return `could not start (${info.spawnError})`;
  if (info.signal) return `was killed by ${info.signal}`;
  return `exited with code ${info.code}`;
}

function stderrHint(child: StdioProcess): string {
  const tail = child.recentStderr();
  return tail ? `; its stderr said: ${tail.split('\n').slice(-3).join(' | ')}` : '';
}
