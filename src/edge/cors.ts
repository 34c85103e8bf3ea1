// CORS for browser clients from allowed origins (the Origin check itself is origin.ts): answers the
// preflight and names the origin on every answer, so a page on an allowed origin can read it, and exposes
// the answer headers a client acts on that a browser would otherwise hide from the page: Retry-After (when
// to send a refused request again), Mcp-Session-Id (a 2025 client's session) and WWW-Authenticate (where
// to get a token).

import type { Context } from 'hono';
import { ErrorCode } from '../../protocol/jsonrpc.js';
import { send } from './exchange.js';
import type { OriginCheck } from './origin.js';
import { reject } from './rejection.js';

const TOKEN_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;
const DEFAULT_ALLOWED_HEADERS = 'content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name';

const EXPOSED_HEADERS = 'retry-after, mcp-session-id, www-authenticate';

/** Headers that let the page at `origin` read the answer. */
export function corsHeaders(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS, vary: 'Origin' };
}

/** The preflight answer: POST, and whichever headers the page asked for (Mcp-Param-* names vary by tool). */
export function preflightHeaders(origin: string, requestedHeaders: string | undefined): Record<string, string> {
  const allowHeaders =
    requestedHeaders && TOKEN_LIST.test(requestedHeaders.trim()) ? requestedHeaders.trim() : DEFAULT_ALLOWED_HEADERS;
  return {
    ...corsHeaders(origin),
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': allowHeaders,
    'access-control-max-age': '600',
  };
}

/** OPTIONS on an MCP endpoint: the methods, and for an allowed browser origin the CORS preflight. */
export function answerPreflight(c: Context, originAllowed: OriginCheck, allow: Record<string, string>): Response {
  const origin = c.req.header('origin');
  if (origin === undefined) return c.body(null, 204, allow);
  if (!originAllowed(origin)) {
    return send(
      c,
      reject(
        403,
        null,
        ErrorCode.InvalidRequest,
        `Origin ${origin} is not allowed; add it to listen.allowedOrigins to let browsers from it in`,
      ),
    );
  }
  return c.body(null, 204, { ...allow, ...preflightHeaders(origin, c.req.header('access-control-request-headers')) });
}
