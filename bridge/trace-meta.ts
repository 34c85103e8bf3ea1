// A traced call's W3C context written into a stdio request's params._meta while it is serialised, then the
// caller's values put back: the message is borrowed, as its id and progress token are (pending-requests.ts),
// so no copy of the message, its params and its _meta is made per call. A key the caller did not have is
// added last and deleted first, which V8 undoes without turning _meta into a slow dictionary object.
import type { JsonObject } from '../protocol/jsonrpc.js';

export interface TraceContext {
  traceparent: string;
  tracestate: string | undefined;
}

/** What _meta held before the trace context was lent into it. */
export interface LentTrace {
  hadParent: boolean;
  parent: unknown;
  hadState: boolean;
  state: unknown;
}

/** Writes the context into `meta`; tracestate is left out (undefined, which JSON omits) when the context has none. */
export function lendTraceMeta(meta: JsonObject, trace: TraceContext): LentTrace {
  const lent: LentTrace = {
    hadParent: 'traceparent' in meta,
    parent: meta.traceparent,
    hadState: 'tracestate' in meta,
    state: meta.tracestate,
  };
  meta.traceparent = trace.traceparent;
  if (trace.tracestate !== undefined || lent.hadState) meta.tracestate = trace.tracestate;
  return lent;
}

/** Puts back what `meta` held, in the reverse order of lendTraceMeta. */
export function restoreTraceMeta(meta: JsonObject, lent: LentTrace): void {
  if (lent.hadState) meta.tracestate = lent.state as JsonObject[string];
  else if ('tracestate' in meta) delete meta.tracestate;
  if (lent.hadParent) meta.traceparent = lent.parent as JsonObject[string];
  else delete meta.traceparent;
}
