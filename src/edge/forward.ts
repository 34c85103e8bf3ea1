// A retry whose requestState names another gateway instance goes to that instance, and its answer comes
// back as it was sent (JSON or SSE, streamed), so the client never notices which replica holds its call.
// The holder authenticates the caller again: the forward carries the client's own headers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

export const FORWARDED_HEADER = 'x-mcp-gateway-forwarded';
const NOT_FORWARDED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'expect', 'upgrade']);

/** Sends the request to `base` + its path; false when the holder could not be reached (nothing was written). */
export async function forwardRequest(base: string, incoming: IncomingMessage, body: string, outgoing: ServerResponse, from: string): Promise<boolean> {
  const headers: Record<string, string> = { [FORWARDED_HEADER]: from };
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (NOT_FORWARDED.has(name) || value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  let response: Response;
  try {
    response = await fetch(new URL(incoming.url ?? '/', base), { method: 'POST', headers, body });
  } catch {
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
    return true;
  }
  const stream = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
  outgoing.once('close', () => stream.destroy());
  stream.pipe(outgoing);
  return true;
}
