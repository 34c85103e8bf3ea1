// Transport-level checks on a POST, before its body is parsed: media types and the body size cap.
import { ErrorCode } from '../protocol/jsonrpc.js';
import { reject, type Rejection } from './rejection.js';

function mediaTypes(header: string): string[] {
  return header.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
}

export function checkContentType(contentType: string | null): Rejection | undefined {
  if (contentType !== null && mediaTypes(contentType)[0] === 'application/json') return undefined;
  return reject(415, null, ErrorCode.InvalidRequest, `Content-Type must be application/json (got ${contentType ?? 'none'})`);
}

/** A missing Accept means "anything" (RFC 9110); a present one must allow both JSON and SSE answers. */
export function checkAccept(accept: string | null): Rejection | undefined {
  if (accept === null) return undefined;
  const types = mediaTypes(accept);
  const json = types.some((t) => t === 'application/json' || t === 'application/*' || t === '*/*');
  const sse = types.some((t) => t === 'text/event-stream' || t === 'text/*' || t === '*/*');
  if (json && sse) return undefined;
  return reject(406, null, ErrorCode.InvalidRequest, `Accept must list both application/json and text/event-stream (got ${accept})`);
}

export function tooLarge(maxBytes: number): Rejection {
  return reject(413, null, ErrorCode.InvalidRequest, `The body is larger than listen.maxBodyBytes (${maxBytes} bytes); raise that setting to accept it`);
}

/** Nesting beyond which a body is refused: deeper values overflow the stack when they are serialised again. */
export const MAX_JSON_DEPTH = 128;

/** Whether a parsed body nests arrays and objects deeper than `limit`. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
