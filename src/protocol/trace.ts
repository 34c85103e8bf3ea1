// What the layers below the edge (cache, MRTR bridge, the propagating wrapper) may tell a traced request,
// without knowing OpenTelemetry: RequestOptions.trace carries one when the request is traced, and is
// undefined otherwise, so an untraced request costs them one field check.
import type { JsonRpcRequest, JsonRpcResponse } from './jsonrpc.js';

export type TraceAttributes = Record<string, string | number | boolean>;

export interface RequestTrace {
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
