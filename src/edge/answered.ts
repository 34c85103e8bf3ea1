// What a step returns once it has written its answer to Node's response itself. Not a Fetch Response:
// building one (as @hono/node-server's RESPONSE_ALREADY_SENT is, when its module loads) makes Node load its
// whole fetch implementation (undici, web streams), about 12 MB of RSS, which a gateway that only serves MCP
// POSTs on the Node path never needs. The steps' types say `Response` ("the request is answered"); only the
// Hono routes hand this on, and they trade it for Hono's own marker (honoAnswer below) first.

/** A unique marker: nothing reads it, it is only compared by identity. */
export const RESPONSE_ALREADY_SENT: Response = Object.freeze(Object.create(null));

let honoSent: Response | undefined;

/**
 * The answer a Hono route gives back to @hono/node-server: its own "already sent" marker for ours. Hono's
 * routes run only once the adapter is loaded (src/gateway/listener.ts loads it on the first such request),
 * so loading its marker here costs nothing more.
 */
export async function honoAnswer(answer: Response | Promise<Response>): Promise<Response> {
  const response = await answer;
  if (response !== RESPONSE_ALREADY_SENT) return response;
  honoSent ??= alreadySentMarker((await import('@hono/node-server/utils/response')).RESPONSE_ALREADY_SENT);
  return honoSent;
}

/**
 * The adapter skips a response only when it is one of Node's own with its "already sent" header; its
 * marker is built from whatever the global Response is when its module first loads. When another
 * @hono/node-server listener in the same process (an MCP server of the SDK, a test's upstream) has already
 * replaced the global with the adapter's lighter Response, the marker is one of those, which the adapter
 * writes out as an empty 200: a second head over the route's own (ERR_HTTP_HEADERS_SENT, and a 2025 GET
 * stream cut with "Error: …" in it). Then the marker is rebuilt from Node's Response, the lighter one's parent.
 */
export function alreadySentMarker(marker: Response): Response {
  const parent: unknown = Object.getPrototypeOf(marker.constructor);
  if (parent === Function.prototype || typeof parent !== 'function') return marker;
  const NodeResponse = parent as typeof Response;
  return new NodeResponse(null, { headers: marker.headers });
}
