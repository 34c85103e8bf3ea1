// Reading a whole list from an upstream, page by page: what the policy guard reads when a call needs a
// tool's definition, what the search index is fed from, and how /mcp re-reads its merged lists to learn routes.
import type { JsonObject, JsonRpcResponse, JsonRpcSuccess } from '../protocol/jsonrpc.js';
import type { RequestOptions, Upstream } from './upstream.js';

/** Past this many pages a list is taken as ended: a server whose cursors never end must not hold a reader for ever. */
const MAX_PAGES = 1_000;

/**
 * Hands each page of `method` to `see`, following nextCursor; returns the error answer that stopped it, or
 * undefined when the list ended. `meta` goes on every page's request as its `_meta`.
 */
export async function eachListPage(
  upstream: Upstream,
  method: string,
  meta: JsonObject,
  options: RequestOptions,
  see: (page: JsonRpcSuccess) => void,
): Promise<JsonRpcResponse | undefined> {
  let cursor: string | undefined;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const params: JsonObject = cursor === undefined ? { _meta: meta } : { _meta: meta, cursor };
    const page = await upstream.request({ jsonrpc: '2.0', id: 0, method, params }, options);
    if (!('result' in page)) return page;
    see(page);
    if (typeof page.result.nextCursor !== 'string') return undefined;
    cursor = page.result.nextCursor;
  }
  return undefined;
}
