// End to end: HttpUpstream against real MCP servers over HTTP on 127.0.0.1 — a modern SDK v2 server
// (createMcpHandler on @hono/node-server), a legacy SDK 1.x server with sessions, a port nothing
// listens on, a server that wants a token the gateway does not have, and one that says it is busy.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpUpstream } from '../../bridge/http/http-upstream.js';
import type { JsonRpcNotification, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { silentLog } from '../../infra/log.js';
import { httpStatusOf } from '../../protocol/error-status.js';
import { retryAfterOf } from '../../protocol/overload.js';
import {
  startLegacyHttpServer,
  startModernHttpServer,
  type LegacyHttpServer,
  type ModernHttpServer,
} from '../fixtures/http-servers.js';
import { stablePort, unusedPort } from '../ports.js';
import { defProblems } from '../schema.js';
import { eventually, textOf } from './harness.js';
import { started, upstreamConfig as config, upstreamRequest as request } from './http-upstream-kit.js';

const until = (check: () => boolean, ms = 2_000): Promise<void> => eventually(check, ms);

const VERSION = '2026-07-28';
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

function result(response: JsonRpcResponse): any {
  assert.ok('result' in response, `expected a result, got ${JSON.stringify(response)}`);
  return response.result;
}

function error(response: JsonRpcResponse): { code: number; message: string; data?: any } {
  assert.ok('error' in response, `expected an error, got ${JSON.stringify(response)}`);
  return response.error;
}

// What the gateway hands on must be valid 2026-07-28 results.
function assertValid(def: string, value: unknown): void {
  assert.deepEqual(defProblems(def, value), []);
}

describe('modern SDK v2 server over HTTP', () => {
  let server: ModernHttpServer;
  let upstream: HttpUpstream;

  before(async () => {
    server = await startModernHttpServer();
    upstream = await started(config('remote', server.url));
  });
  after(async () => {
    await upstream.close();
    await server.close();
  });

  test('the probe finds the modern era and the upstream is ready', () => {
    assert.deepEqual(upstream.status(), { state: 'ready', era: 'modern', restarts: 0, lastError: undefined });
    const probe = server.requests[0]!;
    assert.equal(probe['mcp-method'], 'server/discover');
    assert.equal(probe['mcp-protocol-version'], VERSION);
    assert.equal(probe.accept, 'application/json, text/event-stream');
  });

  test("tools/list and server/discover pass through with the caller's id", async () => {
    const list = await upstream.request(request('list-1', 'tools/list'));
    assert.equal(list.id, 'list-1');
    const names = result(list).tools.map((t: { name: string }) => t.name);
    assert.ok(names.includes('echo') && names.includes('grüße'), names.join());
    assertValid('ListToolsResult', result(list));
    const discover = await upstream.request(request(7, 'server/discover'));
    assert.equal(discover.id, 7);
    assert.deepEqual(result(discover).supportedVersions, [VERSION]);
  });

  test('tools/call with a non-ASCII argument and a non-ASCII tool name (Mcp-Name in base64)', async () => {
    const echo = await upstream.request(request(1, 'tools/call', { name: 'echo', arguments: { text: 'héllo 世界 ' } }));
    assert.equal(textOf(echo), 'héllo 世界 ');
    const seen = server.requests.length;
    const greet = await upstream.request(request(2, 'tools/call', { name: 'grüße', arguments: { name: 'Zoë' } }));
    assert.equal(textOf(greet), 'Grüße, Zoë!');
    const headers = server.requests[seen]!;
    assert.equal(headers['mcp-name'], `=?base64?${Buffer.from('grüße').toString('base64')}?=`);
    assert.equal(headers['mcp-method'], 'tools/call');
  });

  test('resources/read and prompts/get carry Mcp-Name too', async () => {
    let seen = server.requests.length;
    const read = await upstream.request(request(3, 'resources/read', { uri: 'fixture://hello' }));
    assert.equal(result(read).contents[0].text, 'hello world');
    assert.equal(server.requests[seen]!['mcp-name'], 'fixture://hello');
    seen = server.requests.length;
    const prompt = await upstream.request(request(4, 'prompts/get', { name: 'greet', arguments: { name: 'Ada' } }));
    assert.equal(result(prompt).messages[0].content.text, 'Hello, Ada!');
    assert.equal(server.requests[seen]!['mcp-name'], 'greet');
  });

  test("progress notifications reach onNotification in order, before the result, with the caller's token", async () => {
    const order: string[] = [];
    const notifications: JsonRpcNotification[] = [];
    const response = await upstream
      .request(
        request('p-1', 'tools/call', { name: 'progress', arguments: { steps: 3 }, _meta: { progressToken: 'tok-9' } }),
        {
          onNotification: (n) => {
            notifications.push(n);
            order.push(`progress ${(n.params as { progress: number }).progress}`);
          },
        },
      )
      .then((r) => {
        order.push('result');
        return r;
      });
    assert.equal(response.id, 'p-1');
    assert.equal(textOf(response), 'progressed 3');
    assert.deepEqual(order, ['progress 1', 'progress 2', 'progress 3', 'result']);
    for (const n of notifications) {
      assert.equal(n.method, 'notifications/progress');
      assert.equal(n.params!.progressToken, 'tok-9');
    }
  });

  // The call would take longer than the test may: an answer at all is the caller's error coming at once.
  test("cancellation closes the stream: the caller gets an error at once and the server's handler is aborted", {
    timeout: 30_000,
  }, async () => {
    const controller = new AbortController();
    const pending = upstream.request(
      request('c-1', 'tools/call', { name: 'wait', arguments: { ms: 600_000, tag: 'cancel-me' } }),
      {
        signal: controller.signal,
      },
    );
    await until(() => server.started.includes('cancel-me'), 10_000);
    controller.abort();
    const response = await pending;
    assert.equal(response.id, 'c-1');
    assert.equal(error(response).code, -32603);
    assert.match(error(response).message, /cancelled/i);
    await until(() => server.aborted.includes('cancel-me'));
    assert.equal(upstream.status().state, 'ready');
  });

  test('a request over timeoutMs is aborted with an error naming the setting', { timeout: 30_000 }, async () => {
    const quick = await started(config('quick', server.url, { timeoutMs: 300 }));
    try {
      const response = await quick.request(
        request('t-1', 'tools/call', { name: 'wait', arguments: { ms: 600_000, tag: 'too-slow' } }),
      );
      assert.equal(response.id, 't-1');
      assert.equal(error(response).code, -32603);
      assert.match(error(response).message, /did not answer tools\/call within 300 ms.*servers\.quick\.timeoutMs/);
      await until(() => server.aborted.includes('too-slow'));
    } finally {
      await quick.close();
    }
  });

  test("errors from the server pass through with the caller's id (200 and 400 answers)", async () => {
    const unknown = await upstream.request(request('e-1', 'tools/call', { name: 'no-such-tool', arguments: {} }));
    assert.equal(unknown.id, 'e-1');
    assert.ok('error' in unknown || result(unknown).isError === true, JSON.stringify(unknown));

    const badVersion = await upstream.request(
      request('e-2', 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }),
    );
    assert.equal(badVersion.id, 'e-2');
    assert.equal(error(badVersion).code, -32022);
    assert.ok(error(badVersion).data.supported.includes(VERSION));
    assert.equal(upstream.status().era, 'modern', 'a modern error does not change the verdict');
  });

  test('Mcp-Param-* headers from the client are forwarded; other headers are not', async () => {
    const seen = server.requests.length;
    const response = await upstream.request(request('h-1', 'tools/call', { name: 'echo', arguments: { text: 'x' } }), {
      forwardHeaders: {
        'mcp-param-region': 'us-west1',
        'mcp-param-greeting': '=?base64?SGVsbG8sIOS4lueVjA==?=',
        authorization: 'Bearer client-secret',
      },
    });
    assert.equal(textOf(response), 'x');
    const headers = server.requests[seen]!;
    assert.equal(headers['mcp-param-region'], 'us-west1');
    assert.equal(headers['mcp-param-greeting'], '=?base64?SGVsbG8sIOS4lueVjA==?=');
    assert.equal(headers.authorization, undefined);
  });

  test(
    'subscriptions/listen stays open past timeoutMs, ' + 'relays what it was asked for, and announces list changes',
    async () => {
      const quick = await started(config('listener', server.url, { timeoutMs: 300 }));
      const controller = new AbortController();
      const received: JsonRpcNotification[] = [];
      const announced: unknown[] = [];
      quick.events.on('listChanged', (n) => announced.push(n));
      try {
        const listening = quick.request(
          request('sub-1', 'subscriptions/listen', { notifications: { toolsListChanged: true } }),
          {
            signal: controller.signal,
            onNotification: (n) => received.push(n),
          },
        );
        await until(() => received.some((n) => n.method === 'notifications/subscriptions/acknowledged'));
        await new Promise((r) => setTimeout(r, 400)); // longer than timeoutMs
        server.toolsChanged();
        await until(() => received.some((n) => n.method === 'notifications/tools/list_changed'));
        const change = received.find((n) => n.method === 'notifications/tools/list_changed')!;
        assert.equal(
          (change.params!._meta as Record<string, unknown>)['io.modelcontextprotocol/subscriptionId'],
          'sub-1',
        );
        assert.equal(announced.length, 1);
        controller.abort();
        assert.match(error(await listening).message, /cancelled/i);
      } finally {
        await quick.close();
      }
    },
  );

  test('concurrent requests with the same caller id do not mix', async () => {
    const [a, b] = await Promise.all([
      upstream.request(request(1, 'tools/call', { name: 'echo', arguments: { text: 'first' } })),
      upstream.request(request(1, 'tools/call', { name: 'echo', arguments: { text: 'second' } })),
    ]);
    assert.equal(textOf(a), 'first');
    assert.equal(textOf(b), 'second');
  });
});

describe('legacy SDK 1.x server over HTTP', () => {
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

  test('the probe finds the legacy era; the gateway initialises one session', () => {
    assert.equal(upstream.status().state, 'ready');
    assert.equal(upstream.status().era, 'legacy');
    assert.equal(server.initializes, 1);
  });

  test('tools/list and tools/call are completed with resultType, ttlMs, cacheScope and serverInfo', async () => {
    const seen = server.requests.length;
    const list = await upstream.request(request('l-1', 'tools/list'));
    assert.equal(list.id, 'l-1');
    const tools = result(list);
    assert.equal(tools.resultType, 'complete');
    assert.equal(tools.ttlMs, 1234);
    assert.equal(tools.cacheScope, 'private');
    assert.equal(tools._meta[SERVER_INFO].name, 'legacy-http-fixture');
    assertValid('ListToolsResult', tools);

    const headers = server.requests[seen]!;
    assert.ok(headers['mcp-session-id'], 'requests carry the session id');
    assert.equal(headers['mcp-protocol-version'], '2025-11-25');
    assert.equal(headers['mcp-method'], undefined, 'no modern headers on a legacy exchange');

    const call = await upstream.request(request('l-2', 'tools/call', { name: 'echo', arguments: { text: 'héllo' } }));
    assert.equal(call.id, 'l-2');
    assert.equal(textOf(call), 'héllo');
    assert.equal(result(call).resultType, 'complete');
    assert.equal(result(call)._meta[SERVER_INFO].name, 'legacy-http-fixture');
    assertValid('CallToolResult', result(call));
  });

  test('server/discover is answered from the handshake', async () => {
    const before = server.requests.length;
    const discover = await upstream.request(request('d-1', 'server/discover'));
    assert.equal(discover.id, 'd-1');
    const body = result(discover);
    assert.deepEqual(body.supportedVersions, [VERSION]);
    assert.ok(body.capabilities.tools);
    assert.equal(body._meta[SERVER_INFO].name, 'legacy-http-fixture');
    assertValid('DiscoverResult', body);
    assert.equal(server.requests.length, before, 'no request reached the server');
  });

  test("progress is relayed with the caller's token; callers with the same id do not collide", async () => {
    const notifications: JsonRpcNotification[] = [];
    const [progress, echo] = await Promise.all([
      upstream.request(
        request(1, 'tools/call', { name: 'progress', arguments: { steps: 2 }, _meta: { progressToken: 'lt' } }),
        {
          onNotification: (n) => notifications.push(n),
        },
      ),
      upstream.request(request(1, 'tools/call', { name: 'echo', arguments: { text: 'same id' } })),
    ]);
    assert.equal(textOf(progress), 'progressed 2');
    assert.equal(textOf(echo), 'same id');
    assert.deepEqual(
      notifications.map((n) => [n.params!.progressToken, n.params!.progress]),
      [
        ['lt', 1],
        ['lt', 2],
      ],
    );
  });

  test(
    'a request from the server mid-call: ' + 'elicitation is refused (the tool sees it fail), ping is answered',
    async () => {
      const ask = await upstream.request(request('a-1', 'tools/call', { name: 'ask', arguments: {} }));
      assert.match(textOf(ask), /elicitation failed: .*does not relay elicitation\/create/);
      const ping = await upstream.request(request('a-2', 'tools/call', { name: 'pingback', arguments: {} }));
      assert.equal(textOf(ping), 'pong');
    },
  );

  test('cancelling a legacy call tells the server (notifications/cancelled)', async () => {
    const controller = new AbortController();
    const pending = upstream.request(request('x-1', 'tools/call', { name: 'slow', arguments: { ms: 9_999 } }), {
      signal: controller.signal,
    });
    await until(() => server.started.includes(9_999), 10_000);
    controller.abort();
    assert.match(error(await pending).message, /cancelled/i);
    await until(() => server.cancelled.includes(9_999));
  });

  test('the server restarts and forgets the session: the next request re-initialises transparently', async () => {
    const initializes = server.initializes;
    await server.restart();
    const call = await upstream.request(
      request('r-1', 'tools/call', { name: 'echo', arguments: { text: 'after restart' } }),
    );
    assert.equal(call.id, 'r-1');
    assert.equal(textOf(call), 'after restart');
    assert.equal(server.initializes, initializes + 1);
    assert.equal(upstream.status().state, 'ready');

    // Forgotten again while several requests are in flight: one new session serves them all.
    await server.dropSessions();
    const answers = await Promise.all(
      [1, 2, 3].map((i) => upstream.request(request(i, 'tools/call', { name: 'echo', arguments: { text: `n${i}` } }))),
    );
    assert.deepEqual(answers.map(textOf), ['n1', 'n2', 'n3']);
    assert.equal(server.initializes, initializes + 2);
  });

  test('close() ends the session with DELETE', async () => {
    const own = await started(config('old2', server.url));
    const deletes = server.deletes;
    await own.close();
    assert.equal(server.deletes, deletes + 1);
    assert.equal(own.status().state, 'stopped');
    const response = await own.request(request(1, 'tools/list'));
    assert.match(error(response).message, /stopped/);
  });
});

describe('servers that come, go and change', () => {
  test(
    'a server that was down is found after backoff; one replaced by the other era is re-probed without the ' +
      'caller noticing',
    async () => {
      // Below the ephemeral range: servers come and go on it, and no outgoing connection takes it meanwhile.
      const port = await stablePort();
      const upstream = await started(
        config('moving', `http://127.0.0.1:${port}/mcp`, {
          backoff: { initialMs: 100, maxMs: 1_000, crashLimit: 10, windowMs: 60_000 },
        }),
      );
      let legacy: LegacyHttpServer | undefined;
      let modern: ModernHttpServer | undefined;
      try {
        assert.equal(upstream.status().state, 'backing-off');
        legacy = await startLegacyHttpServer(port);
        await until(() => upstream.status().state === 'ready', 5_000);
        assert.equal(upstream.status().era, 'legacy');
        assert.ok(upstream.status().restarts >= 1);
        assert.equal(
          textOf(await upstream.request(request(1, 'tools/call', { name: 'echo', arguments: { text: 'old' } }))),
          'old',
        );

        // The legacy server is replaced by a modern one on the same port: its refusal (400, -32022) is
        // recognised, the era probed again, and the same request sent the modern way.
        await new Promise((r) => setTimeout(r, 1_000)); // re-probes are at most one a second
        await legacy.close();
        legacy = undefined;
        modern = await startModernHttpServer({ port });
        const now = await upstream.request(request('m-1', 'tools/call', { name: 'echo', arguments: { text: 'new' } }));
        assert.equal(now.id, 'm-1');
        assert.equal(textOf(now), 'new');
        assert.equal(upstream.status().era, 'modern');

        // And back: a modern request refused by a legacy server (400 without a modern error) re-probes too.
        await new Promise((r) => setTimeout(r, 1_000));
        await modern.close();
        modern = undefined;
        legacy = await startLegacyHttpServer(port);
        const back = await upstream.request(
          request('m-2', 'tools/call', { name: 'echo', arguments: { text: 'old again' } }),
        );
        assert.equal(textOf(back), 'old again');
        assert.equal(upstream.status().era, 'legacy');
      } finally {
        await upstream.close();
        await legacy?.close();
        await modern?.close();
      }
    },
  );

  test('a pinned era skips the probe and is never re-probed', async () => {
    const legacy = await startLegacyHttpServer();
    const modern = await startModernHttpServer();
    const pinnedLegacy = await started(config('pinned-old', legacy.url, { era: 'legacy' }));
    const pinnedModern = await started(config('pinned-new', modern.url, { era: 'modern' }));
    const wrong = await started(config('pinned-wrong', legacy.url, { era: 'modern' }));
    try {
      assert.equal(pinnedLegacy.status().state, 'ready');
      assert.equal(legacy.requests[0]!['mcp-method'], undefined, 'the first request was initialize, not a probe');
      assert.equal(modern.requests.length, 0, 'nothing sent before the first request');
      assert.equal(pinnedModern.status().state, 'ready');
      assert.equal(
        textOf(await pinnedModern.request(request(1, 'tools/call', { name: 'echo', arguments: { text: 'm' } }))),
        'm',
      );
      assert.equal(
        textOf(await pinnedLegacy.request(request(1, 'tools/call', { name: 'echo', arguments: { text: 'l' } }))),
        'l',
      );

      const refused = await wrong.request(request('w-1', 'tools/list'));
      assert.equal(refused.id, 'w-1');
      assert.match(error(refused).message, /No valid session ID/);
      assert.equal(wrong.status().era, 'modern');
    } finally {
      await Promise.all([pinnedLegacy.close(), pinnedModern.close(), wrong.close()]);
      await legacy.close();
      await modern.close();
    }
  });

  test('a server that goes away while ready: the request fails naming the URL and the upstream backs off', async () => {
    const server = await startModernHttpServer();
    const upstream = await started(config('flaky', server.url));
    try {
      assert.equal(upstream.status().state, 'ready');
      await server.close();
      const response = await upstream.request(request('f-1', 'tools/list'));
      assert.equal(response.id, 'f-1');
      assert.ok(error(response).message.includes(server.url), error(response).message);
      assert.equal(upstream.status().state, 'backing-off');
    } finally {
      await upstream.close();
    }
  });
});

describe('servers that cannot be used', () => {
  // Its timeout and its next connection attempt are both far past the test's own timeout: an answer at all
  // shows the request did not wait for either.
  test('an unreachable URL: backing-off, and requests fail at once naming the server and URL', {
    timeout: 30_000,
  }, async () => {
    const port = await unusedPort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const upstream = await started(
      config('gone', url, {
        timeoutMs: 600_000,
        backoff: { initialMs: 600_000, maxMs: 600_000, crashLimit: 5, windowMs: 60_000 },
      }),
    );
    try {
      assert.equal(upstream.status().state, 'backing-off');
      assert.equal(upstream.status().era, undefined);
      const response = await upstream.request(request('u-1', 'tools/list'));
      assert.equal(upstream.status().state, 'backing-off', 'answered from the failed attempt, not a new one');
      assert.equal(response.id, 'u-1');
      const { message, data } = error(response);
      assert.match(message, /'gone'/);
      assert.ok(message.includes(url), message);
      assert.match(message, /ECONNREFUSED/);
      assert.equal(data.url, url);
    } finally {
      await upstream.close();
    }
  });

  test('a request that arrives while the upstream is starting waits for the verdict', async () => {
    const port = await unusedPort();
    const upstream = new HttpUpstream(config('late', `http://127.0.0.1:${port}/mcp`), silentLog);
    const starting = upstream.start();
    assert.equal(upstream.status().state, 'starting');
    const response = await upstream.request(request(1, 'tools/list'));
    await starting;
    assert.match(error(response).message, /could not be reached/);
    await upstream.close();
  });

  test(
    'a 503 with Retry-After is passed on as a capacity refusal (503 + Retry-After at the edge); one without ' +
      'stays an ordinary error',
    async () => {
      let retryAfter: string | undefined = '7';
      const busy = createServer((req, res) => {
        req.resume();
        res
          .writeHead(503, {
            'content-type': 'text/plain',
            ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
          })
          .end('busy');
      });
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
      const upstream = await started(
        config('busy', `http://127.0.0.1:${(busy.address() as AddressInfo).port}/mcp`, { era: 'modern' }),
      );
      try {
        const refused = await upstream.request(request('b-1', 'tools/call', { name: 'x', arguments: {} }));
        assert.equal(refused.id, 'b-1');
        assert.match(error(refused).message, /HTTP 503.*busy and asked to be sent this again in 7 s/);
        assert.equal(error(refused).data.reason, 'upstream_busy');
        assert.equal(retryAfterOf(refused), 7);
        assert.equal(httpStatusOf(refused), 503);

        retryAfter = new Date(Date.now() + 30_000).toUTCString(); // the HTTP-date form
        const dated = retryAfterOf(await upstream.request(request('b-2', 'tools/call', { name: 'x', arguments: {} })));
        assert.ok(dated !== undefined && dated >= 28 && dated <= 31, String(dated));

        retryAfter = undefined;
        const plain = await upstream.request(request('b-3', 'tools/call', { name: 'x', arguments: {} }));
        assert.match(error(plain).message, /HTTP 503/);
        assert.equal(retryAfterOf(plain), undefined);
        assert.equal(httpStatusOf(plain), 200);
      } finally {
        await upstream.close();
        await new Promise((resolve) => busy.close(resolve));
      }
    },
  );

  test('a 401 names the status and servers.<name>.headers, and is not taken for the legacy era', async () => {
    const server = await startModernHttpServer({ token: 's3cret' });
    const denied = await started(config('locked', server.url, { headers: { Authorization: 'Bearer wrong' } }));
    const allowed = await started(config('unlocked', server.url, { headers: { Authorization: 'Bearer s3cret' } }));
    try {
      const status = denied.status();
      assert.equal(status.state, 'backing-off');
      assert.equal(status.era, undefined, 'no era verdict from a 401');
      assert.match(status.lastError!, /HTTP 401/);
      assert.match(status.lastError!, /servers\.locked\.headers/);
      assert.ok(!server.requests.some((h) => h['mcp-method'] === undefined), 'no initialize was tried');

      const response = await denied.request(request('z-1', 'tools/list'));
      assert.equal(response.id, 'z-1');
      assert.match(error(response).message, /HTTP 401.*servers\.locked\.headers/);

      assert.equal(allowed.status().state, 'ready');
      assert.equal(allowed.status().era, 'modern');
      const list = await allowed.request(request('z-2', 'tools/list'));
      assert.ok(result(list).tools.length > 0);
      assert.ok(
        server.requests.every((h) => h.authorization === 'Bearer wrong' || h.authorization === 'Bearer s3cret'),
      );
    } finally {
      await denied.close();
      await allowed.close();
      await server.close();
    }
  });
});
