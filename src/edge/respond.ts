// Writes an upstream's answer back: one JSON body, or an SSE stream when progress travels with it.
// Closing the SSE stream is the client's cancellation: it aborts the upstream request.
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { Upstream } from '../../bridge/upstream.js';

const JSON_HEADERS = { 'content-type': 'application/json' };
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};
const encoder = new TextEncoder();

function sseEvent(message: JsonRpcNotification | JsonRpcResponse): Uint8Array {
  return encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

export async function respondJson(
  upstream: Upstream,
  message: JsonRpcRequest,
  signal: AbortSignal,
  observe: (response: JsonRpcResponse) => void,
): Promise<Response> {
  const response = await upstream.request(message, { signal });
  observe(response);
  return new Response(JSON.stringify(response), { status: 200, headers: JSON_HEADERS });
}

export function respondSse(
  upstream: Upstream,
  message: JsonRpcRequest,
  signal: AbortSignal,
  observe: (response: JsonRpcResponse) => void,
): Response {
  const cancel = new AbortController();
  const onClientGone = (): void => cancel.abort();
  signal.addEventListener('abort', onClientGone, { once: true });
  let open = true;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      void upstream
        .request(message, {
          signal: cancel.signal,
          onNotification: (notification) => {
            if (open) controller.enqueue(sseEvent(notification));
          },
        })
        .then((response) => {
          signal.removeEventListener('abort', onClientGone);
          if (!open) return;
          observe(response);
          open = false;
          controller.enqueue(sseEvent(response));
          controller.close();
        });
    },
    cancel() {
      open = false;
      cancel.abort();
    },
  });
  return new Response(stream, { status: 200, headers: SSE_HEADERS });
}
