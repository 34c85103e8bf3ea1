// Log messages through the gateway, compared with the SDK v2 server asked directly: a request that sets
// _meta["io.modelcontextprotocol/logLevel"] gets the upstream's notifications/message at or above that level
// on its own SSE stream, and a request without it gets none. Upstreams: the SDK v2 server over HTTP and over
// stdio, and a 2025 server over stdio (whose level is its connection's: the gateway raises it to the most
// verbose level asked for and filters per request). server/discover offers logging where an upstream does.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { serve } from '@hono/node-server';
import { createMcpHandler } from '@modelcontextprotocol/server';
import type { RunningGateway } from '../../src/gateway.js';
import { startLegacyHttpServer, type LegacyHttpServer } from '../fixtures/http-servers.js';
import { fixture, post, request, schemaProblems, startTestGateway, until } from './harness.js';

const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
const LEVELS = ['debug', 'info', 'warning', 'error'];

/** The SDK v2 fixture server over HTTP, with its `log` tool. */
async function sdkHttpServer(): Promise<{ url: string; close(): Promise<void> }> {
  process.env.FIXTURE_NO_STDIO = '1';
  const { createModernFixtureServer } = await import('../fixtures/modern-server.js').finally(
    () => delete process.env.FIXTURE_NO_STDIO,
  );
  const handler = createMcpHandler(() => createModernFixtureServer(true), { legacy: 'reject' });
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: (r: Request) => handler.fetch(r), hostname: '127.0.0.1', port: 0 }, () =>
      resolve(s as Server),
    ) as Server;
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Calls the `log` tool (named `tool` at `url`) and returns the log messages that came with the answer. */
async function callLog(url: string, tool: string, tag: string, meta: Record<string, unknown> = {}) {
  const answer = await post(url, request('tools/call', { name: tool, arguments: { tag }, _meta: meta }));
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.result?.content?.[0]?.text, `logged ${tag}`, JSON.stringify(answer.body));
  for (const event of answer.events) assert.deepEqual(schemaProblems(event.method ?? 'tools/call', event), []);
  return { answer, logs: answer.events.filter((e) => e.method === 'notifications/message').map((e) => e.params) };
}

describe('log messages: directly and through the gateway', () => {
  let http: Awaited<ReturnType<typeof sdkHttpServer>>;
  let gateway: RunningGateway;
  const env = { env: { FIXTURE_LOGGING: '1' } };
  before(async () => {
    http = await sdkHttpServer();
    gateway = await startTestGateway({
      http: { url: http.url },
      stdio: fixture('modern-server', env),
      legacy: fixture('legacy-server', env),
      plain: fixture('modern-server'),
    });
    // Every upstream answering, so /mcp's first listing is not cut short by a child still starting.
    assert.ok(await until(() => [...gateway.upstreams.values()].every((u) => u.status().state === 'ready'), 20_000));
  });
  after(async () => {
    await gateway.close();
    await http.close();
  });

  const endpoints = (server: string) => [
    { url: () => `${gateway.url}/servers/${server}/mcp`, tool: 'log', label: `/servers/${server}/mcp` },
    { url: () => `${gateway.url}/mcp`, tool: `${server}__log`, label: `/mcp (${server}__log)` },
  ];

  for (const level of ['debug', 'warning', 'error']) {
    test(`logLevel ${level}: what the SDK v2 server sends directly, on every endpoint and upstream`, async () => {
      const direct = await callLog(http.url, 'log', 'tag', { [LOG_LEVEL]: level });
      const expected = LEVELS.slice(LEVELS.indexOf(level)).map((l) => ({ level: l, data: `tag ${l}` }));
      assert.deepEqual(direct.logs, expected, 'the reference: the server itself');
      for (const server of ['http', 'stdio', 'legacy']) {
        for (const endpoint of endpoints(server)) {
          const through = await callLog(endpoint.url(), endpoint.tool, 'tag', { [LOG_LEVEL]: level });
          assert.equal(through.answer.headers.get('content-type'), 'text/event-stream', endpoint.label);
          assert.deepEqual(through.logs, direct.logs, `${endpoint.label} at ${level}`);
        }
      }
    });
  }

  test(
    'no logLevel: no log messages directly or through the gateway, ' + 'even from a 2025 server set to debug',
    async () => {
      // A 2025 server at debug (set for an earlier caller) logs for every request; the gateway keeps them from this
      // one.
      await callLog(`${gateway.url}/servers/legacy/mcp`, 'log', 'earlier', { [LOG_LEVEL]: 'debug' });
      const direct = await callLog(http.url, 'log', 'quiet', { progressToken: 'p1' });
      assert.deepEqual(direct.logs, []);
      for (const server of ['http', 'stdio', 'legacy']) {
        for (const endpoint of endpoints(server)) {
          // With and without a progressToken (which makes the answer a stream that could carry them).
          for (const meta of [{}, { progressToken: 'p2' }]) {
            const through = await callLog(endpoint.url(), endpoint.tool, 'quiet', meta);
            assert.deepEqual(through.logs, [], `${endpoint.label} ${JSON.stringify(meta)}`);
          }
        }
      }
    },
  );

  test('a 2025 server: a logLevel that is not a level is refused with -32602, as a modern server should', async () => {
    const answer = await post(
      `${gateway.url}/servers/legacy/mcp`,
      request('tools/call', { name: 'log', arguments: { tag: 'x' }, _meta: { [LOG_LEVEL]: 'loud' } }),
    );
    const response = answer.events.at(-1) ?? answer.body;
    assert.equal(response.error?.code, -32602, JSON.stringify(response));
    assert.match(response.error.message, /logLevel/);
  });

  test("a 2025 server over stdio: two callers in flight at once never see each other's log messages", async () => {
    const url = `${gateway.url}/servers/legacy/mcp`;
    const [loud, quiet] = await Promise.all([
      callLog(url, 'log', 'loud', { [LOG_LEVEL]: 'debug' }),
      callLog(url, 'log', 'quiet', { progressToken: 'q' }),
    ]);
    assert.deepEqual(quiet.logs, []);
    // With two calls in flight stdio cannot say whose a message is: the loud caller gets its own or none.
    assert.ok(
      loud.logs.every((log) => log.data.startsWith('loud ')),
      JSON.stringify(loud.logs),
    );
  });

  test(
    'server/discover offers logging where the upstream does: ' + 'per server as it says, on /mcp when any does',
    async () => {
      const direct = await post(http.url, request('server/discover'));
      assert.deepEqual(direct.body.result.capabilities.logging, {});
      for (const server of ['http', 'stdio', 'legacy']) {
        const { body } = await post(`${gateway.url}/servers/${server}/mcp`, request('server/discover'));
        assert.deepEqual(body.result.capabilities.logging, {}, server);
        assert.deepEqual(schemaProblems('server/discover', body), []);
      }
      const plain = await post(`${gateway.url}/servers/plain/mcp`, request('server/discover'));
      assert.equal(
        plain.body.result.capabilities.logging,
        undefined,
        'a server without logging is not made to offer it',
      );
      const merged = await post(`${gateway.url}/mcp`, request('server/discover'));
      assert.deepEqual(merged.body.result.capabilities.logging, {});
      assert.deepEqual(schemaProblems('server/discover', merged.body), []);
    },
  );
});

describe("log messages from a 2025 server over HTTP (its level is its session's)", () => {
  let server: LegacyHttpServer;
  let gateway: RunningGateway;
  before(async () => {
    server = await startLegacyHttpServer(0, { logging: true });
    gateway = await startTestGateway({ remote: { url: server.url } });
  });
  after(async () => {
    await gateway.close();
    await server.close();
  });

  test('each request sees its own level; the session is only ever made more verbose', async () => {
    const url = `${gateway.url}/servers/remote/mcp`;
    const cases = [
      // [asked, what the caller sees, what the session's server sent (its level: the most verbose asked so far)]
      { meta: { progressToken: 1 }, seen: [], sent: LEVELS },
      { meta: { [LOG_LEVEL]: 'warning' }, seen: ['warning', 'error'], sent: ['warning', 'error'] },
      { meta: { [LOG_LEVEL]: 'error' }, seen: ['error'], sent: ['warning', 'error'] },
      { meta: { progressToken: 2 }, seen: [], sent: ['warning', 'error'] },
      { meta: { [LOG_LEVEL]: 'debug' }, seen: LEVELS, sent: LEVELS },
      { meta: { [LOG_LEVEL]: 'info' }, seen: LEVELS.slice(1), sent: LEVELS },
    ];
    for (const [i, { meta, seen, sent }] of cases.entries()) {
      server.logged.length = 0;
      const { logs } = await callLog(i % 2 ? url : `${gateway.url}/mcp`, i % 2 ? 'log' : 'remote__log', `t${i}`, meta);
      assert.deepEqual(
        logs,
        seen.map((level) => ({ level, data: `t${i} ${level}` })),
        `case ${i}: ${JSON.stringify(meta)}`,
      );
      assert.deepEqual(server.logged, sent, `case ${i}: the session's level`);
    }
  });
});
