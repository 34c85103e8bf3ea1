// Transport-level checks on a POST, before its body is parsed: media types and the body size cap.
import { isRawNumber } from '../../protocol/exact-json.js';
import { ErrorCode } from '../../protocol/jsonrpc.js';
import { reject, type Rejection } from './rejection.js';

function mediaTypes(header: string): string[] {
  return header.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
}

export function checkContentType(contentType: string | null): Rejection | undefined {
  if (contentType === 'application/json') return undefined; // nearly every request: no parsing
  if (contentType !== null && mediaTypes(contentType)[0] === 'application/json') return undefined;
  return reject(
    415,
    null,
    ErrorCode.InvalidRequest,
    `Content-Type must be application/json (got ${contentType ?? 'none'})`,
  );
}

/** What the SDKs send: allowed without parsing. */
const USUAL_ACCEPT = 'application/json, text/event-stream';

/** A missing Accept means "anything" (RFC 9110); a present one must allow both JSON and SSE answers. */
export function checkAccept(accept: string | null): Rejection | undefined {
  if (accept === null || accept === USUAL_ACCEPT) return undefined;
  const types = mediaTypes(accept);
  const json = types.some((t) => t === 'application/json' || t === 'application/*' || t === '*/*');
  const sse = types.some((t) => t === 'text/event-stream' || t === 'text/*' || t === '*/*');
  if (json && sse) return undefined;
  return reject(
    406,
    null,
    ErrorCode.InvalidRequest,
    `Accept must list both application/json and text/event-stream (got ${accept})`,
  );
}

/**
 * Bodies up to this size past the limit are read to their end and dropped after a 413, so the client, still
 * writing, gets to read the answer: closing at once makes it see EPIPE instead. Beyond it (or with no
 * Content-Length) the connection is closed rather than spend the bandwidth.
 */
const DISCARD_UP_TO_BYTES = 16 * 1024 * 1024;

/** The headers a 413 goes with: keep the connection (Node drops the rest of the body) when that is cheap. */
export function tooLargeHeaders(contentLength: string | undefined): Record<string, string> | undefined {
  const declared = Number(contentLength);
  return contentLength !== undefined && declared <= DISCARD_UP_TO_BYTES ? undefined : { connection: 'close' };
}

export function tooLarge(maxBytes: number): Rejection {
  return reject(
    413,
    null,
    ErrorCode.InvalidRequest,
    `The body is larger than listen.maxBodyBytes (${maxBytes} bytes); raise that setting to accept it`,
  );
}

/** Nesting beyond which a body is refused: deeper values overflow the stack when they are serialised again. */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether a parsed body nests arrays and objects deeper than `limit`. Recursion is bounded by `limit` (the
 * walk stops one level past it), and it allocates nothing: it runs on every request.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  return deeper(value, limit);
}

function deeper(value: unknown, levelsLeft: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  // A number kept as written (exact-json.ts) is an object to JavaScript only: no level of nesting.
  if (levelsLeft === 0) return !isRawNumber(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (deeper(value[i], levelsLeft - 1)) return true;
    return false;
  }
  for (const key in value) {
    if (deeper((value as Record<string, unknown>)[key], levelsLeft - 1)) return true;
  }
  return false;
}
