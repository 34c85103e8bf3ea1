// W3C trace context travels in params._meta (traceparent, tracestate, baggage) and on to upstreams as it
// came; the gateway only reads the trace id, to put it on its own log lines.
import { isObject } from '../../protocol/jsonrpc.js';

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

export function traceIdOf(meta: unknown): string | undefined {
  if (!isObject(meta) || typeof meta.traceparent !== 'string') return undefined;
  const id = TRACEPARENT.exec(meta.traceparent)?.[1];
  return id === undefined || /^0+$/.test(id) ? undefined : id;
}
