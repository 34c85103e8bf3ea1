// Decodes MCP header values (Mcp-Name, Mcp-Param-*): plain visible ASCII, or `=?base64?…?=` around the
// Base64 of the UTF-8 value. Returns undefined for a value that is neither.

const PREFIX = '=?base64?';
const SUFFIX = '?=';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const PLAIN = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/;

export function decodeHeaderValue(raw: string): string | undefined {
  if (raw.startsWith(PREFIX) && raw.endsWith(SUFFIX) && raw.length >= PREFIX.length + SUFFIX.length) {
    const encoded = raw.slice(PREFIX.length, raw.length - SUFFIX.length);
    if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) return undefined;
    try {
      return utf8.decode(Buffer.from(encoded, 'base64'));
    } catch {
      return undefined; // not UTF-8: it could never match the body
    }
  }
  return raw === '' || PLAIN.test(raw) ? raw : undefined;
}
