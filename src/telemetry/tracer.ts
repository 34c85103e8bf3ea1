// The gateway's view of a tracer, free of OpenTelemetry types: the edge holds one of these (or undefined
// when tracing is off), and only otel-tracer.ts, loaded on demand, knows the SDK behind it.
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { RequestTrace, TraceAttributes } from '../../protocol/request-trace.js';
import type { ACCEPT_PARENTS } from './config.js';

export type AcceptParents = (typeof ACCEPT_PARENTS)[number];

export interface GatewayTracer {
  /** telemetry.traces.acceptParents: whose incoming trace context a request span may join. */
  readonly acceptParents: AcceptParents;
  /** The server span of one request, its parent from the given W3C pair (header or _meta), else a new root. */
  startRequest(start: RequestStart): RequestSpan;
  /** Sends what is buffered and stops (on close). */
  shutdown(): Promise<void>;
}

export interface RequestStart {
  name: string;
  traceparent: string | undefined;
  tracestate: string | undefined;
  /** When the request arrived, by performance.now(): the span starts there, not when its body was read. */
  startedAt: number;
  attributes: TraceAttributes;
}

export interface RequestSpan extends RequestTrace {
  /** One attribute (no object per call: the edge sets them one at a time, after the start). */
  setAttribute(key: string, value: string | number | boolean): void;
  /** Marks the span failed: error.type as the conventions want it (a JSON-RPC code, or an exception's class). */
  fail(errorType: string, description?: string): void;
  end(): void;
  /**
   * Opens the client span of a retry forwarded to `holder`, the replica holding its call (at `url`); the
   * forward carries its traceparent, so the holder's server span joins this trace under it.
   */
  forward(holder: string, url: string, message: JsonRpcRequest): ForwardTrace;
}

export interface ForwardTrace {
  readonly traceparent: string;
  readonly tracestate: string | undefined;
  /** Ends the span with the holder's HTTP status, or undefined when it could not be reached. */
  end(status: number | undefined): void;
}
