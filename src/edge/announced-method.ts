// The method a request's `Mcp-Method` header names, for a request refused before its body is read (401,
// 403, 429): the metrics and the status page's recent denials then show what was asked, not "unknown".
// The header is the caller's word, unchecked against any body: only a method of the MCP 2026 request set is
// taken as is; anything else is the one fixed label `other`, so a header cannot grow the label set.
import { MODERN_REQUEST_METHODS } from '../../protocol/mcp.js';
import { METHOD_OTHER } from '../ops/index.js';
import type { NodeExchange } from './exchange.js';

/** The method the header announces (bounded as above), or undefined when there is no such header. */
export function announcedMethod(exchange: NodeExchange): string | undefined {
  const named = exchange.incoming.headers['mcp-method'];
  if (named === undefined) return undefined;
  return typeof named === 'string' && MODERN_REQUEST_METHODS.has(named) ? named : METHOD_OTHER;
}
