// The modern request-metadata headers an HTTP upstream must see: MCP-Protocol-Version, Mcp-Method,
// Mcp-Name (the tool or prompt name, or the resource URI) and the client's Mcp-Param-* headers, with
// values that are not plain visible ASCII carried as `=?base64?…?=` around the Base64 of their UTF-8.
import { isObject, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { META, MODERN_VERSION, NAME_PARAM } from '../../protocol/mcp.js';

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
/** Visible ASCII, inner spaces allowed; no leading or trailing whitespace, no tabs or controls. */
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const FORWARDED_PREFIX = 'mcp-param-';

/** A header value for Mcp-Name or Mcp-Param-*: as-is when it is safe plain ASCII, else the Base64 form. */
export function encodeHeaderValue(value: string): string {
  if (value === '' || (PLAIN.test(value) && !(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX))))
    return value;
  return `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/**
 * Appends the per-request modern headers (flat name/value pairs, the form undici takes without copying)
 * to `headers`, which already holds the upstream's fixed headers.
 */
export function appendModernHeaders(
  headers: string[],
  message: JsonRpcRequest,
  forwardHeaders: Readonly<Record<string, string>> | undefined,
): string[] {
  const params = message.params;
  const meta = params?._meta;
  const version = isObject(meta) ? meta[META.protocolVersion] : undefined;
  headers.push(
    'mcp-protocol-version',
    typeof version === 'string' ? version : MODERN_VERSION,
    'mcp-method',
    message.method,
  );
  const nameParam = NAME_PARAM[message.method];
  if (nameParam !== undefined) {
    const name = params?.[nameParam];
    if (typeof name === 'string') headers.push('mcp-name', encodeHeaderValue(name));
  }
  if (forwardHeaders !== undefined) {
    // Only Mcp-Param-* travel on: never a client's own credentials or hop-by-hop headers.
    for (const name in forwardHeaders) {
      if (name.startsWith(FORWARDED_PREFIX)) headers.push(name, forwardHeaders[name]!);
    }
  }
  return headers;
}

/** The caller's W3C trace context (RequestOptions.traceparent), appended as headers when there is one. */
export function appendTraceHeaders(headers: string[], trace: { traceparent?: string; tracestate?: string }): string[] {
  if (trace.traceparent === undefined) return headers;
  headers.push('traceparent', trace.traceparent);
  if (trace.tracestate !== undefined) headers.push('tracestate', trace.tracestate);
  return headers;
}
