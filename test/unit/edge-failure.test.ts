// An exception inside the edge's steps (src/edge/app.ts: serve counts the request out, the fast path's catch
// answers): the caller gets the fixed 500, or a half-sent stream is cut; the log has the error in full; the
// request is counted out all the same (tracker and metrics), so a drain does not wait for it for ever. Real
// node:http on loopback, the edge from createApp, upstreams that throw or reject where a server would answer.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Upstream } from '../../bridge/upstream.js';
import { createApp } from '../../src/edge/app.js';
import { RequestTracker } from '../../src/edge/request-tracker.js';
import { TaskIdCodec } from '../../src/tasks/task-ids.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { headersFor, request } from '../e2e/harness.js';
import { openSecurity } from '../open-security.js';
import { recordingLog } from '../recording-log.js';

/** How each upstream fails: a synchronous throw, a rejection, or a rejection after its stream began. */
function failing(name: string, how: 'throws' | 'rejects' | 'rejects-mid-stream'): Upstream {
  const request = (_message: JsonRpcRequest, options: { onStreamStart?: () => void } = {}) => {
    if (how === 'throws') throw new Error(`${name} blew up`);
    if (how === 'rejects-mid-stream') options.onStreamStart?.();
    return Promise.reject(new Error(`${name} blew up`));
  };
  return { name, events: new EventEmitter(), request, status: () => ({ state: 'ready' }) } as unknown as Upstream;
}

const recorded = recordingLog();
const tracker = new RequestTracker();
const finished: string[] = [];
let server: Server;
let base: string;

before(async () => {
  const security = await openSecurity();
  const upstreams = new Map([
    ['thrower', failing('thrower', 'throws')],
    ['rejecter', failing('rejecter', 'rejects')],
    ['streamer', failing('streamer', 'rejects-mid-stream')],
  ]);
  const metrics = {
    requestStarted() {},
    requestFinished: (endpoint: string, _method: unknown, outcome: string) =>
      void finished.push(`${endpoint} ${outcome}`),
  };
  const edge = createApp({
    upstreams,
    aggregate: undefined,
    allowedOrigins: [],
    maxBodyBytes: 64 * 1024,
    listen: undefined as never,
    contextKey: Buffer.alloc(32),
    security: () => security,
    metrics: metrics as never,
    tracker,
    ops: { startedAt: Date.now(), operators: () => undefined, upstreams: () => [], snapshot: async () => ({}) },
    log: recorded.log,
    tasks: new TaskIdCodec(undefined),
  });
  server = createServer((incoming, outgoing) => {
    if (edge.serveMcpPost(incoming, outgoing) === undefined) outgoing.writeHead(599).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function call(server: string, meta: Record<string, unknown> = {}): Promise<Response> {
  const body = request('tools/call', { name: 'echo', arguments: {}, _meta: meta });
  return fetch(`${base}/servers/${server}/mcp`, {
    method: 'POST',
    headers: headersFor(body),
    body: JSON.stringify(body),
  });
}

function errorsLogged(upstream: string): number {
  return recorded.lines.filter(
    (line) =>
      line.msg === 'unexpected error in the HTTP edge' && String((line.obj.err as Error)?.message).startsWith(upstream),
  ).length;
}

describe('an exception in the edge', () => {
  for (const upstream of ['thrower', 'rejecter']) {
    test(
      `${upstream}: the caller gets the fixed 500, the log the error, ` + 'and the request is counted out as an error',
      async () => {
        const response = await call(upstream);
        assert.equal(response.status, 500);
        const body = await response.json();
        assert.equal(body.error.code, -32603);
        assert.equal(body.error.message, 'Internal error in mcp-gateway; see the gateway log');
        assert.equal(errorsLogged(upstream), 1);
        assert.equal(tracker.inFlight, 0);
        assert.ok(finished.includes(`${upstream} error`), finished.join(', '));
      },
    );
  }

  test('after the stream began (progress asked for): the half-sent answer is cut, not ended as if whole', async () => {
    const response = await call('streamer', { progressToken: 'p' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    await assert.rejects(response.text(), /terminated|aborted|socket/i);
    assert.equal(errorsLogged('streamer'), 1);
    assert.equal(tracker.inFlight, 0);
    assert.ok(finished.includes('streamer error'), finished.join(', '));
  });
});
