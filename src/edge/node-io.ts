// The hot path talks to Node's own request and response objects (through @hono/node-server's bindings)
// rather than Fetch Request/Response: no undici Request, no web streams, no AbortController per request.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { CancelSignal } from '../../protocol/cancel.js';
import { PARAM_HEADER_PREFIX } from './param-headers.js';
import type { HeaderSource } from './request-rules.js';

/** Node's lower-cased header record seen through the Fetch-style `get`. */
export class NodeHeaders implements HeaderSource {
  constructor(private readonly headers: IncomingHttpHeaders) {}

  get(name: string): string | null {
    const value = this.headers[name];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/**
 * Reads the body as UTF-8 text: undefined once it exceeds maxBytes (the rest is left unread), null when
 * the client went away before sending all of it. Three listeners, left on once the body is read (they do
 * nothing then, and go with the request): adding and taking off four per request showed in the hot path's profile.
 */
export function readBody(incoming: IncomingMessage, maxBytes: number): Promise<string | undefined | null> {
  const declared = Number(incoming.headers['content-length']);
  if (declared > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let chunks: Buffer[] | undefined = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      if (chunks === undefined) return;
      total += chunk.length;
      if (total > maxBytes) {
        chunks = undefined;
        incoming.off('data', onData); // the rest is left unread
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    incoming.on('data', onData);
    incoming.on('end', () => {
      if (chunks === undefined) return;
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, total).toString('utf8'));
      chunks = undefined;
    });
    // A request closes after its end, or without one when the client went away mid-body (the 'aborted' and
    // 'error' it also emits then say no more than this).
    incoming.on('close', () => {
      if (chunks === undefined) return;
      chunks = undefined;
      resolve(null);
    });
  });
}

/**
 * Aborts when the client closes the connection before its response was finished. An upstream usually
 * listens with one listener at a time, so the first has a slot of its own and only others get an array.
 */
export class ClientGone implements CancelSignal {
  aborted = false;
  private first: (() => void) | undefined;
  private more: (() => void)[] | undefined;

  constructor(outgoing: ServerResponse) {
    // `on`, not `once`: a response closes once, and once's wrapper (a bound function and its state) was
    // two more objects per request.
    outgoing.on('close', () => {
      if (outgoing.writableFinished) return;
      this.aborted = true;
      const listeners = [this.first, ...(this.more ?? [])];
      this.first = this.more = undefined;
      for (const listener of listeners) listener?.();
    });
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.first === undefined) this.first = listener;
    else (this.more ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    if (this.first === listener) this.first = undefined;
    else if (this.more) this.more = this.more.filter((l) => l !== listener);
  }
}

/**
 * The client's Mcp-Param-* headers (names lower-cased, repeats joined with ", " as Node joins them), for an
 * HTTP upstream; undefined when there are none. Read from the raw name/value list: a first-letter test
 * passes over nearly every header, where a walk of the header record tested each name's prefix.
 */
export function forwardedParamHeaders(rawHeaders: readonly string[]): Record<string, string> | undefined {
  let found: Record<string, string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i]!;
    if (raw.length < PARAM_HEADER_PREFIX.length || (raw.charCodeAt(0) | 0x20) !== 0x6d) continue; // 'm' or 'M'
    const name = raw.toLowerCase();
    if (!name.startsWith(PARAM_HEADER_PREFIX)) continue;
    const value = rawHeaders[i + 1]!;
    const earlier = found?.[name];
    (found ??= {})[name] = earlier === undefined ? value : `${earlier}, ${value}`;
  }
  return found;
}

/**
 * Writes a complete JSON answer from UTF-8 pieces. Several pieces are corked into one writev, so bytes
 * shared between answers (a cached page) are written as they are, not copied into one buffer first; short
 * string pieces are copied by the writev itself.
 */
export function writeJsonBody(
  outgoing: ServerResponse,
  status: number,
  pieces: readonly (Buffer | string)[],
  headers?: Record<string, string>,
): void {
  let length = 0;
  for (const piece of pieces) length += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length;
  // Most answers carry no headers of their own: no object spread for them.
  outgoing.writeHead(
    status,
    headers === undefined
      ? { 'content-type': 'application/json', 'content-length': length }
      : { ...headers, 'content-type': 'application/json', 'content-length': length },
  );
  if (pieces.length === 1) {
    outgoing.end(pieces[0]);
    return;
  }
  outgoing.cork();
  for (const piece of pieces) outgoing.write(piece);
  outgoing.uncork();
  outgoing.end();
}
