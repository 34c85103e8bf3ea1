// Every page of a server's (or /mcp's) tools/list as one caller would list them: what the policy guard reads
// when a call needs the tool's definition (pins compare digests of it).
import type { Upstream } from '../../bridge/upstream.js';
import { isObject, type JsonObject, type JsonRpcRequest, type JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { CallOptions } from './respond.js';

/** Lists page by page (at most 1,000 pages), handing each successful page to `see`; stops at the first error. */
export async function listAllTools(upstream: Upstream, message: JsonRpcRequest, call: CallOptions, see: (page: JsonRpcResponse) => void): Promise<void> {
  const meta = isObject(message.params?._meta) ? message.params._meta : {};
  let cursor: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const params: JsonObject = { _meta: { ...meta, progressToken: undefined } };
    if (cursor !== undefined) params.cursor = cursor;
    const page = await upstream.request({ jsonrpc: '2.0', id: 0, method: 'tools/list', params }, { authContext: call.authContext, reach: call.reach });
    if (!('result' in page)) return;
    see(page);
    if (typeof page.result.nextCursor !== 'string') return;
    cursor = page.result.nextCursor;
  }
}
