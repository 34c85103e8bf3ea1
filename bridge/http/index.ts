// bridge/http/: a remote MCP server over Streamable HTTP (undici), either era. What other folders use: the
// header encoding of Mcp-Param-* values (the edge and the guardrails mirror them), and the upstream itself,
// loaded at the first remote server a config names (undici stays unloaded without one).
export { encodeHeaderValue } from './mcp-headers.js';
export type { HttpUpstream } from './http-upstream.js';

/** http-upstream.ts, with undici behind it: loaded for the first `url:` server. */
export const loadHttpUpstream = () => import('./http-upstream.js');
