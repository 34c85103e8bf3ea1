// One upstream's part of a fanned-out /mcp request (a list page, a discover): its answer, or a time-out once
// the list deadline passes, so one slow server never holds up the merge. Never rejects.
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import { ErrorCode, errorResponse, isObject, type JsonObject } from '../../protocol/jsonrpc.js';
import { LIST_ITEMS, type ListMethod } from '../../protocol/mcp.js';
import type { Outcome } from './merged-discover.js';

/**
 * The abort reaches uncached requests; a cached one keeps running for whoever else waits on it, and fills the
 * cache for the next list. `upstream` undefined: removed by a reload since the cursor or the list began.
 */
export function askWithinDeadline(
  upstream: Upstream | undefined,
  server: string,
  method: string,
  { params, cursor }: { params: JsonObject; cursor: string | null },
  { authContext, caller }: RequestOptions,
  deadlineMs: number,
): Promise<Outcome> {
  if (!upstream)
    return Promise.resolve({
      server,
      response: {
        jsonrpc: '2.0',
        id: 0,
        result: { resultType: 'complete', [LIST_ITEMS[method as ListMethod] ?? 'items']: [] },
      },
    });
  // Each upstream borrows its own copy: adapters rewrite ids, tokens and _meta while in flight.
  const own: JsonObject = { ...params, _meta: isObject(params._meta) ? { ...params._meta } : params._meta };
  if (cursor === null) delete own.cursor;
  else own.cursor = cursor;
  const cancel = new AbortController();
  return new Promise<Outcome>((resolve) => {
    const timer = setTimeout(() => {
      cancel.abort();
      resolve({ server, timedOut: true });
    }, deadlineMs);
    void upstream
      .request({ jsonrpc: '2.0', id: 0, method, params: own }, { signal: cancel.signal, authContext, caller })
      .then(
        (response) => {
          clearTimeout(timer);
          resolve({ server, response });
        },
        (error: Error) => {
          clearTimeout(timer);
          resolve({ server, response: errorResponse(0, ErrorCode.InternalError, error.message) });
        },
      );
  });
}
