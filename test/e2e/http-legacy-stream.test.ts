// End to end: the standalone GET event stream of a 2025-era Streamable HTTP session, against a real
// SDK 1.x StreamableHTTPServerTransport server on 127.0.0.1 — list changes heard on it, server requests
// answered from it, reopened after it breaks and after the session is re-initialised, closed with the
// upstream, and not asked for again from a server that answers GET with 405.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { HttpUpstream } from '../../bridge/http/http-upstream.js';
import type { JsonRpcNotification } from '../../protocol/jsonrpc.js';
import { startLegacyHttpServer, type LegacyHttpServer } from '../fixtures/http-servers.js';
import { eventually, textOf } from './harness.js';
import { started, upstreamConfig, upstreamRequest as request } from './http-upstream-kit.js';
import { recordingLog, type LoggedLine } from '../recording-log.js';

const until = (check: () => boolean, ms = 3_000): Promise<void> => eventually(check, ms);

/** Sent by every upstream of this file, and by nothing else that may reach its servers' ports. */
const AUTHORIZATION = 'Bearer stream-test';
/** The upstream under test: configured headers, and a short 2025 session lifetime. */
const config = (name: string, url: string) =>
  upstreamConfig(name, url, { headers: { authorization: AUTHORIZATION }, legacyTtlMs: 1000 });

/** The next 'listChanged' the upstream emits, or a rejection after `ms`. */
function nextListChange(upstream: HttpUpstream, ms = 1_000): Promise<JsonRpcNotification> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      upstream.events.off('listChanged', heard);
      reject(new Error(`no listChanged within ${ms} ms`));
    }, ms);
    const heard = (notification: JsonRpcNotification) => {
      clearTimeout(timer);
      resolve(notification);
    };
    upstream.events.once('listChanged', heard);
  });
}

/** What the stream logs when it stops for a session: no reopen follows either. */
const NO_GET = /offers no GET event stream \(HTTP 405\)/;
const FORGOT = /forgot the session behind the GET event stream \(HTTP 404\)/;
const REOPEN = /opening it again/;
const said = (lines: LoggedLine[], what: RegExp) => lines.some((line) => what.test(line.msg));
/** Reopens the stream scheduled (each is logged with its delay) after the last line matching `what`. */
function reopensAfter(lines: LoggedLine[], what: RegExp): number {
  let last = lines.length - 1;
  while (last >= 0 && !what.test(lines[last]!.msg)) last--;
  return lines.slice(last + 1).filter((line) => REOPEN.test(line.msg)).length;
}

/**
 * The GETs this file's upstreams sent. A server here listens on a port the system picked, which another test file's
 * process may have used a moment before: a client of that one still retrying (a balancer's health check, a stream
 * reopening) reaches this server too, and was once counted as 14 reopens after close() in a busy CI run.
 */
const gets = (server: LegacyHttpServer) =>
  server.requests.filter((r) => r[':method'] === 'GET' && r.authorization === AUTHORIZATION);

describe('the GET event stream of a legacy session', () => {
  let server: LegacyHttpServer;
  let upstream: HttpUpstream;

  before(async () => {
    server = await startLegacyHttpServer();
    upstream = await started(config('old', server.url));
  });
  after(async () => {
    await upstream.close();
    await server.close();
  });

  test("is opened once the session is ready, with the session's headers", async () => {
    assert.equal(upstream.status().state, 'ready');
    await until(() => server.openGetStreams === 1);
    const [get, ...more] = gets(server);
    assert.equal(more.length, 0);
    const initialized = server.requests.find((r) => r[':method'] === 'POST' && r['mcp-session-id'])!;
    assert.equal(get!['mcp-session-id'], initialized['mcp-session-id']);
    assert.equal(get!['mcp-protocol-version'], '2025-11-25');
    assert.equal(get!.accept, 'text/event-stream');
    assert.equal(get!['content-type'], undefined);
    assert.equal(get!.authorization, 'Bearer stream-test', 'configured headers travel with it');
  });

  test('a tool list change announced on it reaches upstream.events within a second', async () => {
    const heard = nextListChange(upstream);
    server.toolsChanged();
    const notification = await heard;
    assert.equal(notification.method, 'notifications/tools/list_changed');
  });

  test('requests the server sends on it are answered: ping with a result, roots/list refused', async () => {
    assert.deepEqual(await server.requestClients('ping'), ['ok']);
    const [refused] = await server.requestClients('roots/list');
    assert.match(refused!, /does not relay roots\/list/);
  });

  test('a stream the connection drops is opened again (after about a second)', async () => {
    const before = gets(server).length;
    const closed = server.closedGetStreams;
    server.cutGetStreams();
    await until(() => server.closedGetStreams === closed + 1);
    assert.equal(server.openGetStreams, 0);
    await until(() => server.openGetStreams === 1, 5_000);
    assert.equal(gets(server).length, before + 1);
    const heard = nextListChange(upstream);
    server.toolsChanged();
    assert.equal((await heard).method, 'notifications/tools/list_changed');
  });

  test(
    'after the server drops its sessions, the re-initialised session opens a new stream and changes are heard ' +
      'again',
    async () => {
      const initializes = server.initializes;
      const oldSession = gets(server).at(-1)!['mcp-session-id'];
      const askedBefore = gets(server).filter((r) => r['mcp-session-id'] === oldSession).length;
      await server.dropSessions();
      await until(() => server.openGetStreams === 0);
      // The next request meets 404 and re-initialises; the new session opens its own stream.
      assert.equal(
        textOf(await upstream.request(request('e-1', 'tools/call', { name: 'echo', arguments: { text: 'again' } }))),
        'again',
      );
      assert.equal(server.initializes, initializes + 1);
      await until(() => server.openGetStreams === 1);
      const newSession = gets(server).at(-1)!['mcp-session-id'];
      assert.notEqual(newSession, oldSession);

      const heard = nextListChange(upstream);
      server.toolsChanged();
      assert.equal((await heard).method, 'notifications/tools/list_changed');

      // The old session's stream is not asked for again: it was closed when its session was replaced.
      await new Promise((r) => setTimeout(r, 1_500));
      assert.equal(gets(server).filter((r) => r['mcp-session-id'] === oldSession).length, askedBefore);
      assert.equal(server.openGetStreams, 1);
    },
  );

  test(
    'a session the server forgot while nobody sent requests: ' + 'its stream stops at 404 instead of retrying',
    async () => {
      const { log, lines } = recordingLog();
      const own = await started(config('idle', server.url), log);
      try {
        await until(() => server.openGetStreams === 2);
        const session = gets(server).at(-1)!['mcp-session-id'];
        await server.dropSessions();
        // Once when the session was opened, once more after the server ended it: that one is answered 404, and
        // the stream decides, logging it, to wait for the next session instead of scheduling a reopen.
        await eventually(() => said(lines, FORGOT), 10_000);
        assert.equal(gets(server).filter((r) => r['mcp-session-id'] === session).length, 2);
        assert.equal(reopensAfter(lines, FORGOT), 0, 'no reopen scheduled after the 404');
        // The next request re-initialises and the stream comes back.
        assert.equal(
          textOf(await own.request(request('i-1', 'tools/call', { name: 'echo', arguments: { text: 'back' } }))),
          'back',
        );
        await until(() => server.openGetStreams >= 1);
      } finally {
        await own.close();
      }
    },
  );
});

describe('closing', () => {
  // The server never ends a GET stream by itself: a close() that waited for it would outlast the test's timeout.
  test('close() closes the GET stream at once: the server sees it end', { timeout: 30_000 }, async () => {
    const server = await startLegacyHttpServer();
    try {
      const upstream = await started(config('closing', server.url));
      await until(() => server.openGetStreams === 1);
      await upstream.close();
      await until(() => server.openGetStreams === 0 && server.closedGetStreams === 1);
      const count = gets(server).length;
      await new Promise((r) => setTimeout(r, 1_500));
      assert.equal(gets(server).length, count, 'not reopened after close()');
    } finally {
      await server.close();
    }
  });
});

describe('a server that offers no GET stream (405)', () => {
  test('is asked once per session, not in a loop; requests work as before', async () => {
    const server = await startLegacyHttpServer(0, { getStream: false });
    const { log, lines } = recordingLog();
    const upstream = await started(config('no-get', server.url), log);
    try {
      assert.equal(upstream.status().state, 'ready');
      // The 405 is answered, and the stream decides (logging it) not to ask again: no reopen is scheduled.
      await eventually(() => said(lines, NO_GET), 10_000);
      assert.equal(gets(server).length, 1);
      assert.equal(reopensAfter(lines, NO_GET), 0, 'no reopen scheduled after the 405');
      assert.equal(
        textOf(await upstream.request(request(1, 'tools/call', { name: 'echo', arguments: { text: 'fine' } }))),
        'fine',
      );

      // A new session asks once more, and only once.
      await server.dropSessions();
      assert.equal(
        textOf(await upstream.request(request(2, 'tools/call', { name: 'echo', arguments: { text: 'still' } }))),
        'still',
      );
      await until(() => gets(server).length === 2);
      await eventually(() => lines.filter((line) => NO_GET.test(line.msg)).length === 2, 10_000);
      assert.equal(gets(server).length, 2);
      assert.equal(reopensAfter(lines, NO_GET), 0, 'no reopen scheduled after the second 405');
    } finally {
      await upstream.close();
      await server.close();
    }
  });
});
