// What the layers below the edge (cache, MRTR bridge, the propagating wrapper) may tell a traced request,
// without knowing OpenTelemetry: RequestOptions.trace carries one when the request is traced, and is
// undefined otherwise, so an untraced request costs them one field check.
import type { JsonRpcRequest, JsonRpcResponse } from './jsonrpc.js';

export type TraceAttributes = Record<string, string | number | boolean>;

export interface RequestTrace {
  /** The ids of the request's server span, which its log and audit lines carry (traceFields). */
  readonly traceId: string;
  readonly spanId: string;
  /** Something that happened to the request (a cache hit or miss, an MRTR hold), as an event on its span. */
  event(name: string, attributes?: TraceAttributes): void;
  /** Opens the client span of one call to `server`; what it returns is sent along so the server's spans join. */
  upstream(server: string, transport: 'stdio' | 'http', message: JsonRpcRequest): UpstreamTrace;
}

export interface UpstreamTrace {
  /** The W3C traceparent naming this call's span as the parent. */
  readonly traceparent: string;
  readonly tracestate: string | undefined;
  /** Ends the span with the upstream's answer (an error answer marks it failed). */
  end(response: JsonRpcResponse): void;
}

/**
 * The fields that tie a log line to its request's span, for a line written where the request's trace is at
 * hand (log lines are correlated explicitly, not through an async context: docs/deployment.md#traces);
 * undefined untraced, so `...traceFields(trace)` adds nothing.
 */
export function traceFields(trace: RequestTrace | undefined): { trace_id: string; span_id: string } | undefined {
  return trace && { trace_id: trace.traceId, span_id: trace.spanId };
}
