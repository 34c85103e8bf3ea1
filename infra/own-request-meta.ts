// The _meta of a request the gateway makes on its own (re-reading lists, feeding the search index, its
// listen streams, checking what a server advertises). Toward upstreams the gateway is an MCP client, and a
// client's request carries the full _meta: the version it speaks, its capabilities (none: it never answers
// a server's question on its own behalf) and who it is.
import { META, SUPPORTED_VERSIONS } from '../protocol/mcp.js';
import { GATEWAY_INFO } from './version.js';

/** A fresh object each time, as callers may add to it. */
export function ownRequestMeta(): Record<string, unknown> {
  return {
    [META.protocolVersion]: SUPPORTED_VERSIONS[0],
    [META.clientCapabilities]: {},
    [META.clientInfo]: { ...GATEWAY_INFO },
  };
}
