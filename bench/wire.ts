// What every bench client puts on the wire of a modern (2026-07-28) request: the protocol _meta in the
// body and the HTTP headers, kept in one place so all benches send the same bytes and a version bump is one
// edit. bench/spawn-direct.mjs keeps its own META: it runs under plain node, which cannot import this file.

export const PROTOCOL_VERSION = '2026-07-28';

/** params._meta of every request: the version and (empty) capabilities a stateless modern client sends. */
export const META = {
  'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

const BASE_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': PROTOCOL_VERSION,
};

/**
 * The headers of one request, in the order they go out: the base three, any credentials, mcp-method, and
 * mcp-name when the method names something (tools/call).
 */
export function mcpHeaders(
  method: string,
  name?: string,
  credentials?: Record<string, string>,
): Record<string, string> {
  return { ...BASE_HEADERS, ...credentials, 'mcp-method': method, ...(name !== undefined && { 'mcp-name': name }) };
}
