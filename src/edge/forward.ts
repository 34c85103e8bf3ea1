// A retry whose requestState names another gateway instance goes to that instance, and its answer comes
// back as it was sent (JSON or SSE, streamed), so the client never notices which replica holds its call.
// The forward carries none of the client's credentials: this replica vouches for the caller it
// authenticated in a signed header (src/mrtr/peer-trust.ts), which the holder checks instead.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CALLER_HEADER, type ForwardedCaller, type PeerTrust } from '../mrtr/index.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import type { ForwardTrace } from '../telemetry/index.js';

export const FORWARDED_HEADER = 'x-mcp-gateway-forwarded';
const NOT_FORWARDED = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'expect',
  'upgrade',
  // Credentials stay with the replica that checked them: whoever answers a forward never sees them.
  'authorization',
  'proxy-authorization',
  'cookie',
  CALLER_HEADER,
]);

/**
 * The caller another replica vouched for; undefined when the request was not forwarded; null when it says it
 * was but no replica sharing mrtr.secret signed it for this path (a client sending the header itself).
 */
export function forwardedCaller(
  incoming: IncomingMessage,
  trust: Pick<PeerTrust, 'openVouch'> | undefined,
): ForwardedCaller | undefined | null {
  if (incoming.headers[FORWARDED_HEADER] === undefined) return undefined;
  const header = incoming.headers[CALLER_HEADER];
  return trust?.openVouch(typeof header === 'string' ? header : undefined, requestPath(incoming)) ?? null;
}

/** The path of the client's request line (never its host): what a forward goes to, and what its vouch names. */
export function requestPath(incoming: IncomingMessage): string {
  return new URL(incoming.url ?? '/', 'http://request.invalid').pathname;
}

/**
 * Sends the request to the same path on `base`; false when the holder could not be reached (nothing was
 * written). Only the path and query of the client's request line are used: an absolute URL there must not
 * send the gateway anywhere else.
 */
export async function forwardRequest(
  base: string,
  incoming: IncomingMessage,
  body: string,
  outgoing: ServerResponse,
  from: string,
  vouch: string,
  trace?: ForwardTrace,
): Promise<boolean> {
  const requested = new URL(incoming.url ?? '/', 'http://request.invalid');
  const target = new URL(requested.pathname + requested.search, base);
  if (target.origin !== new URL(base).origin) {
    trace?.end(undefined);
    return false;
  }
  const headers = forwardHeaders(incoming, from, vouch, trace);
  const abort = new AbortController();
  const gone = (): void => abort.abort(); // the client leaving cancels the forward, and so the held call
  outgoing.once('close', gone);
  let response: Response;
  try {
    response = await fetch(target, { method: 'POST', headers, body, redirect: 'manual', signal: abort.signal });
  } catch {
    outgoing.off('close', gone);
    trace?.end(undefined);
    return false;
  }
  const relayed: Record<string, string> = {};
  for (const name of ['content-type', 'cache-control', 'www-authenticate', 'retry-after']) {
    const value = response.headers.get(name);
    if (value !== null) relayed[name] = value;
  }
  outgoing.writeHead(response.status, relayed);
  if (!response.body) {
    outgoing.end();
    trace?.end(response.status);
    return true;
  }
  // A holder that stops mid-answer ends this answer too, and nothing else.
  await pipeline(Readable.fromWeb(response.body as ReadableStream), outgoing).catch(() => outgoing.destroy());
  outgoing.off('close', gone);
  trace?.end(response.status);
  return true;
}

/**
 * The client's headers but credentials and hop-by-hop ones; a traced forward names its own span as the holder's parent.
 */
function forwardHeaders(
  incoming: IncomingMessage,
  from: string,
  vouch: string,
  trace: ForwardTrace | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { [FORWARDED_HEADER]: from, [CALLER_HEADER]: vouch };
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (NOT_FORWARDED.has(name) || value === undefined) continue;
    if (trace !== undefined && (name === 'traceparent' || name === 'tracestate')) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (trace !== undefined) {
    headers.traceparent = trace.traceparent;
    if (trace.tracestate !== undefined) headers.tracestate = trace.tracestate;
  }
  return headers;
}
