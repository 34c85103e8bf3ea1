// Which era a remote server speaks, read from its answer to a modern `server/discover` POST, as the
// spec's versioning and Streamable HTTP pages say: a DiscoverResult, or a recognised modern error
// (also in a 400 body), means modern; any other 4xx or 2xx answer means legacy. Failures that say
// nothing about the era (unreachable, 401/403, 5xx, timeout) give no verdict.
import { ErrorCode, isModernError, isObject, MODERN_ONLY_ERRORS } from '../../protocol/jsonrpc.js';
import type { HttpExchange } from './http-exchange.js';
import { isAuthStatus } from './http-failures.js';
import type { Era } from '../upstream.js';

export type ProbeVerdict = Era | 'no-verdict';

/**
 * Codes a modern server uses for HTTP-level refusals (the spec's header, version, capability and method
 * rules). A modern request answered 400/404 with any other body was probably refused by a 2025 server.
 */
const MODERN_REFUSALS: ReadonlySet<number> = new Set([
  ...MODERN_ONLY_ERRORS,
  ErrorCode.InvalidParams,
  ErrorCode.MethodNotFound,
  ErrorCode.InvalidRequest,
  ErrorCode.ParseError,
]);

export function probeVerdict(exchange: HttpExchange): ProbeVerdict {
  switch (exchange.end) {
    case 'response': {
      const response = exchange.response!;
      if ('result' in response) return Array.isArray(response.result.supportedVersions) ? 'modern' : 'legacy';
      return isModernError(response.error) ? 'modern' : 'legacy';
    }
    case 'status':
      if (isAuthStatus(exchange.status) || exchange.status >= 500) return 'no-verdict';
      return isObject(exchange.body) && isModernError(exchange.body.error) ? 'modern' : 'legacy';
    case 'empty':
    case 'unreadable':
      return 'legacy';
    default:
      return 'no-verdict';
  }
}

/**
 * A modern request whose answer looks like a 2025 server's refusal (405, or 400/404 without a modern
 * error body): the server behind the URL may have changed era.
 */
export function looksLegacy(exchange: HttpExchange): boolean {
  if (exchange.end !== 'status') return false;
  if (exchange.status === 405) return true;
  if (exchange.status !== 400 && exchange.status !== 404) return false;
  const error = isObject(exchange.body) ? exchange.body.error : undefined;
  return !(isObject(error) && typeof error.code === 'number' && MODERN_REFUSALS.has(error.code));
}

/** A legacy request refused the way only a 2026-era server refuses: the server behind the URL changed era. */
export function looksModern(exchange: HttpExchange): boolean {
  return (
    exchange.end === 'status' &&
    exchange.status === 400 &&
    isObject(exchange.body) &&
    isModernError(exchange.body.error)
  );
}
