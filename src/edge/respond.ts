// Writes an upstream's answer straight onto the Node response: one JSON body, or an SSE stream when
// progress or log messages travel with it (notifications first, the response last, then the stream ends). The client
// closing the connection is its cancellation: ClientGone aborts the upstream request.
import type { ServerResponse } from 'node:http';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import { responseBytes, serializeResponse, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../protocol/jsonrpc.js';
import { logFilter } from './log-messages.js';
import { ClientGone, writeJsonBody } from './node-io.js';

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/** Bytes of unread progress a client may have waiting before further progress is dropped. */
const MAX_BUFFERED_PROGRESS = 1024 * 1024;

/** What the caller is shown of the upstream's answer (the answer itself, or a filtered copy). */
export type Shape = (response: JsonRpcResponse) => JsonRpcResponse;
/** What the upstream is told besides the message. */
export type CallOptions = Pick<RequestOptions, 'forwardHeaders' | 'authContext' | 'reach'>;

export async function respondJson(
  upstream: Upstream,
  message: JsonRpcRequest,
  outgoing: ServerResponse,
  shape: Shape,
  call: CallOptions,
): Promise<void> {
  const answer = await upstream.request(message, { signal: new ClientGone(outgoing), forwardHeaders: call.forwardHeaders, authContext: call.authContext, reach: call.reach });
  if (outgoing.destroyed) return;
  writeJsonBody(outgoing, 200, responseBytes(shape(answer)));
}

export async function respondSse(
  upstream: Upstream,
  message: JsonRpcRequest,
  outgoing: ServerResponse,
  shape: Shape,
  call: CallOptions,
): Promise<void> {
  const signal = new ClientGone(outgoing);
  outgoing.writeHead(200, SSE_HEADERS);
  outgoing.flushHeaders();
  const send = (event: JsonRpcNotification | JsonRpcResponse): void => {
    outgoing.write(`event: message\ndata: ${'method' in event ? JSON.stringify(event) : serializeResponse(event)}\n\n`);
  };
  const shown = logFilter(message);
  const response = await upstream.request(message, {
    signal,
    forwardHeaders: call.forwardHeaders,
    authContext: call.authContext,
    reach: call.reach,
    onNotification: (notification) => {
      // A client that does not read its stream misses progress rather than have the gateway buffer it all.
      if (!signal.aborted && outgoing.writableLength < MAX_BUFFERED_PROGRESS && shown(notification)) send(notification);
    },
  });
  if (signal.aborted || outgoing.destroyed) return;
  send(shape(response));
  outgoing.end();
}
