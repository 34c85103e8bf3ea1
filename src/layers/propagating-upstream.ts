// Right on each server's upstream (below limits, MRTR and the cache, so its span times only the call): a
// traced request gets a client span, and the server gets its context so that its own spans join the
// trace — an HTTP server as the traceparent header, a stdio server as params._meta.traceparent (the MCP
// convention; a deliberate rewrite, docs/design.md, written in by the stdio upstream as it serialises).
// Untraced requests pass straight through.
import { optionsWith } from '../../bridge/request-options.js';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import { isObject, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { UpstreamTrace } from '../../protocol/request-trace.js';
import { UpstreamWrapper } from './upstream-wrapper.js';

export class PropagatingUpstream extends UpstreamWrapper {
  constructor(
    inner: Upstream,
    private readonly transport: 'stdio' | 'http',
  ) {
    super(inner);
  }

  request(message: JsonRpcRequest, options?: RequestOptions): Promise<JsonRpcResponse> {
    const trace = options?.trace;
    if (trace === undefined) return this.inner.request(message, options);
    return this.traced(trace.upstream(this.name, this.transport, message), message, options!);
  }

  private traced(span: UpstreamTrace, message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    const meta = message.params?._meta;
    // A stdio server gets the context in _meta, which its upstream writes in while it serialises (a message
    // without a _meta, which modern requests always have, gets a copy that has one). An HTTP server reads
    // the header; _meta is rewritten for it only when the caller put a context there too, so that the two
    // never name different parents.
    const copy = isObject(meta)
      ? this.transport === 'http' && meta.traceparent !== undefined
      : this.transport === 'stdio';
    const sent = copy ? withTraceMeta(message, span) : message;
    const traced = optionsWith(options, options.signal, span);
    // inner.request never rejects (bridge/upstream.ts); a throw would still end the span, as a failure.
    return this.inner.request(sent, traced).then(
      (response) => {
        span.end(response);
        return response;
      },
      (error: unknown) => {
        span.end({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'the upstream call threw' } });
        throw error;
      },
    );
  }
}

/**
 * A copy of the message whose _meta names this call's span (the caller's message is left as it came, as
 * an aggregated list sends one message to every server at once). Built as literals and never with
 * `delete`, which would turn _meta into a slow dictionary object for the serialiser.
 */
function withTraceMeta(message: JsonRpcRequest, span: UpstreamTrace): JsonRpcRequest {
  const params = message.params;
  const meta = {
    ...(isObject(params?._meta) ? params._meta : undefined),
    traceparent: span.traceparent,
    tracestate: span.tracestate,
  };
  return { jsonrpc: message.jsonrpc, id: message.id, method: message.method, params: { ...params, _meta: meta } };
}
