// What each server's upstream calls leave in the metrics: their duration (with the trace id as an exemplar
// when one is known), their errors by kind, tool calls by tool (a bounded set of names), and the recent
// window the status page draws. One ServerMeter per server, whose label children are bound once per
// method (methodLabel keeps that set fixed), so a call costs a map lookup and the observations themselves.
import type { Registry } from 'prom-client';
import { HotCounter, HotHistogram, type CounterChild, type HistogramChild } from './hot-metrics.js';
import { failureMarkOf } from '../../protocol/failure-mark.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { retryAfterOf } from '../../protocol/overload.js';
import { DURATION_BUCKETS, methodLabel } from './metric-labels.js';
import { RecentWindow, type RecentTraffic } from './recent-window.js';

const PREFIX = 'mcp_gateway_';

/**
 * Why an upstream call failed, as `upstream_errors_total{kind}` records it: the server's own JSON-RPC
 * error; no answer in time; the server could not be reached (down, refused, crashed, not ready); it answered
 * with no JSON-RPC response (an HTTP error status, an unreadable body); it said it was busy (503 with
 * Retry-After); the caller went away first.
 */
export type UpstreamErrorKind = 'jsonrpc' | 'timeout' | 'unreachable' | 'bad_answer' | 'overloaded' | 'cancelled';

/** How a tools/call ended, as `tool_calls_total{outcome}` records it. */
export type ToolOutcome = 'ok' | 'tool_error' | 'error';

/**
 * Distinct (server, tool) pairs `tool_calls_total` names, gateway-wide; calls to any further tool count as TOOL_OTHER.
 */
export const TOOL_LABEL_CAP = 100;
export const TOOL_OTHER = '_other';

type ToolChildren = Record<ToolOutcome, CounterChild>;

interface MethodChildren {
  duration: HistogramChild;
  errors: Map<UpstreamErrorKind, CounterChild>;
}

export class UpstreamMetrics {
  private readonly duration: HotHistogram;
  private readonly errors: HotCounter;
  private readonly tools: HotCounter;
  private readonly meters = new Map<string, ServerMeter>();
  /** (server, tool) pairs named so far, towards TOOL_LABEL_CAP. */
  private toolNames = 0;

  constructor(register: Registry) {
    this.duration = new HotHistogram(register, {
      name: `${PREFIX}upstream_request_duration_seconds`,
      help:
        'Time each upstream took to answer a request the gateway sent it (queue wait not included), by server ' +
        'and method; exemplars carry the trace id (OpenMetrics).',
      labelNames: ['server', 'method'],
      buckets: DURATION_BUCKETS,
    });
    this.errors = new HotCounter(register, {
      name: `${PREFIX}upstream_errors_total`,
      help:
        "Upstream requests that ended in an error, by server, method and kind (jsonrpc: the server's own error; " +
        'timeout; unreachable; bad_answer: no JSON-RPC response; overloaded: the server answered 503 busy; ' +
        'cancelled: the caller went away).',
      labelNames: ['server', 'method', 'kind'],
    });
    this.tools = new HotCounter(register, {
      name: `${PREFIX}tool_calls_total`,
      help:
        `tools/call requests sent to each server, by tool and outcome (ok, tool_error: a result with isError, ` +
        `error: a JSON-RPC error); at most ${TOOL_LABEL_CAP} tool names, the rest as tool="${TOOL_OTHER}".`,
      labelNames: ['server', 'tool', 'outcome'],
    });
  }

  /** The meter of one server, kept across reloads that replace it (its recent window goes on). */
  forServer(server: string): ServerMeter {
    let meter = this.meters.get(server);
    if (!meter) {
      meter = new ServerMeter(server, this);
      this.meters.set(server, meter);
    }
    return meter;
  }

  /** Drops a removed server: its series, its recent window, and the places its tools took under the cap. */
  forget(server: string): void {
    const meter = this.meters.get(server);
    this.meters.delete(server);
    if (meter) this.toolNames -= meter.namedTools;
    for (const metric of [this.duration, this.errors, this.tools]) metric.remove({ server });
  }

  /** The recent window of `server`, or undefined before its first call. */
  recent(server: string, nowMs: number = performance.now()): RecentTraffic | undefined {
    return this.meters.get(server)?.window.snapshot(nowMs);
  }

  /** @internal ServerMeter's access to the shared metrics. */
  methodChildren(server: string, method: string): MethodChildren {
    return { duration: this.duration.labels(server, method), errors: new Map() };
  }

  /** @internal */
  errorChild(server: string, method: string, kind: UpstreamErrorKind): CounterChild {
    return this.errors.labels(server, method, kind);
  }

  /** @internal A place for a new tool name, while the cap allows. */
  toolChildren(server: string, tool: string): ToolChildren | undefined {
    if (tool !== TOOL_OTHER) {
      if (this.toolNames >= TOOL_LABEL_CAP) return undefined;
      this.toolNames++;
    }
    const child = (outcome: ToolOutcome) => this.tools.labels(server, tool, outcome);
    return { ok: child('ok'), tool_error: child('tool_error'), error: child('error') };
  }
}

export class ServerMeter {
  readonly window = new RecentWindow();
  private readonly byMethod = new Map<string, MethodChildren>();
  private readonly byTool = new Map<string, ToolChildren>();
  private other: ToolChildren | undefined;

  constructor(
    readonly server: string,
    private readonly metrics: UpstreamMetrics,
  ) {}

  /** Tool names this server holds places for under TOOL_LABEL_CAP (its TOOL_OTHER takes none). */
  get namedTools(): number {
    return this.byTool.size;
  }

  /**
   * One upstream call, begun at `startedMs` (performance.now()), ended now. `traceId` (32 hex digits)
   * becomes the duration's exemplar; `aborted` says whether the caller had gone away by then.
   */
  finished(
    message: JsonRpcRequest,
    response: JsonRpcResponse,
    startedMs: number,
    traceId: string | undefined,
    aborted: boolean,
  ): void {
    const now = performance.now();
    const seconds = (now - startedMs) / 1000;
    const method = methodLabel(message.method);
    let children = this.byMethod.get(method);
    if (!children) {
      children = this.metrics.methodChildren(this.server, method);
      this.byMethod.set(method, children);
    }
    // A W3C trace id is 32 hex digits; anything else is left out (prom-client throws on an over-long exemplar,
    // and a meter must never fail the call it measures).
    if (traceId?.length === 32) children.duration.observeWithExemplar(seconds, { trace_id: traceId });
    else children.duration.observe(seconds);
    const failed = 'error' in response;
    if (failed) this.countError(children, method, errorKind(response, aborted));
    // A call the caller abandoned says nothing about the server's health.
    this.window.record(now, now - startedMs, failed && !aborted);
    if (message.method === 'tools/call') this.countTool(message, response);
  }

  private countError(children: MethodChildren, method: string, kind: UpstreamErrorKind): void {
    let child = children.errors.get(kind);
    if (!child) {
      child = this.metrics.errorChild(this.server, method, kind);
      children.errors.set(kind, child);
    }
    child.inc();
  }

  private countTool(message: JsonRpcRequest, response: JsonRpcResponse): void {
    const name = message.params?.name;
    if (typeof name !== 'string') return;
    const outcome: ToolOutcome = 'error' in response ? 'error' : response.result.isError === true ? 'tool_error' : 'ok';
    let children = this.byTool.get(name);
    // Only a tool the server answered for takes one of the capped places: names a caller made up (unknown
    // tools are JSON-RPC errors) cannot use them up.
    if (!children && outcome !== 'error') {
      children = this.metrics.toolChildren(this.server, name);
      if (children) this.byTool.set(name, children);
    }
    children ??= this.other ??= this.metrics.toolChildren(this.server, TOOL_OTHER)!;
    children[outcome].inc();
  }
}

function errorKind(response: JsonRpcResponse, aborted: boolean): UpstreamErrorKind {
  if (aborted) return 'cancelled';
  if (retryAfterOf(response) !== undefined) return 'overloaded';
  return failureMarkOf(response) ?? 'jsonrpc';
}
