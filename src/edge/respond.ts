// Writes an upstream's answer straight onto the Node response: one JSON body, or an SSE stream when
// progress or log messages travel with it (notifications first, the response last, then the stream ends).
// The client closing the connection is its cancellation: ClientGone aborts the upstream request. The HTTP
// status comes from httpStatusOf (protocol/error-status.ts); an SSE stream, once started, is 200
// whatever follows.
import { refuseUndeclaredTask } from '../tasks/index.js';
import type { ServerResponse } from 'node:http';
import type { RequestOptions } from '../../bridge/upstream.js';
import { httpStatusOf } from '../../protocol/error-status.js';
import { retryAfterHeaders } from '../../protocol/overload.js';
import {
  responsePieces,
  serializeResponse,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import { logFilter } from './log-messages.js';
import { ClientGone, writeJsonBody } from './node-io.js';

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/** Bytes of unread progress a client may have waiting before further progress is dropped. */
const MAX_BUFFERED_PROGRESS = 1024 * 1024;

/**
 * What the upstream is told besides the message: this request's own object, which respond completes (signal, stream
 * hooks).
 */
export type CallOptions = RequestOptions;

/** Where the request goes (the execute step) and what the caller is shown of the answer (a filtered copy, or it). */
export interface Served {
  request(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse>;
  shape(response: JsonRpcResponse): JsonRpcResponse;
}

export async function respondJson(
  served: Served,
  message: JsonRpcRequest,
  outgoing: ServerResponse,
  call: CallOptions,
): Promise<void> {
  call.signal = new ClientGone(outgoing);
  const answer = await served.request(message, call);
  if (outgoing.destroyed) return;
  const shaped = served.shape(refuseUndeclaredTask(message, answer));
  writeJsonBody(outgoing, httpStatusOf(shaped), responsePieces(shaped), retryAfterHeaders(shaped));
}

export async function respondSse(
  served: Served,
  message: JsonRpcRequest,
  outgoing: ServerResponse,
  call: CallOptions,
): Promise<void> {
  const signal = new ClientGone(outgoing);
  // The stream starts when the upstream starts answering as one (a stdio child: at once, so a client can
  // close it to cancel; an HTTP upstream: when its own stream opens) or with the first notification.
  // Until then the status is still open, and an error the spec gives a status to is answered as JSON with it.
  let started = false;
  const start = (): void => {
    if (started || signal.aborted) return;
    started = true;
    outgoing.writeHead(200, SSE_HEADERS);
    outgoing.flushHeaders();
  };
  const send = (event: JsonRpcNotification | JsonRpcResponse): void => {
    outgoing.write(`event: message\ndata: ${'method' in event ? JSON.stringify(event) : serializeResponse(event)}\n\n`);
  };
  const shown = logFilter(message);
  call.signal = signal;
  call.onStreamStart = start;
  call.onNotification = (notification) => {
    if (!shown(notification)) return;
    start();
    // A client that does not read its stream misses progress rather than have the gateway buffer it all.
    if (!signal.aborted && outgoing.writableLength < MAX_BUFFERED_PROGRESS) send(notification);
  };
  const response = await served.request(message, call);
  if (signal.aborted || outgoing.destroyed) return;
  const shaped = served.shape(refuseUndeclaredTask(message, response));
  if (!started) {
    const status = httpStatusOf(shaped);
    if (status !== 200) return writeJsonBody(outgoing, status, responsePieces(shaped), retryAfterHeaders(shaped));
    start();
  }
  send(shaped);
  outgoing.end();
}
