// What an operator relies on: health and readiness that follow the upstreams, the status data, operator
// pages behind authentication when it is on, trace ids in the audit log, and a shutdown that lets the
// requests in flight finish.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { eventually, fixture, headersFor, post, request, startTestGateway, send } from './harness.js';
import { tempDir } from '../temp.js';

describe('health, readiness and status', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway({
      a: fixture('modern-server'),
      b: fixture('modern-server'),
      optional: { command: 'no-such-program-mcp-gw', required: false },
    });
    await eventually(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 20_000);
  });
  after(() => gateway?.close());

  test('/healthz answers while the process runs', async () => {
    const answer = await fetch(`${gateway.url}/healthz`);
    assert.equal(answer.status, 200);
    const body = await answer.json();
    assert.equal(body.status, 'ok');
    assert.equal(typeof body.uptimeSeconds, 'number');
  });

  test(
    '/readyz is 200 while every required upstream is ready (an optional one down does not count), 503 naming one ' +
      'that is not',
    async () => {
      const ready = await (await fetch(`${gateway.url}/readyz`)).json();
      assert.equal(ready.status, 'ready');
      assert.equal(ready.upstreams.a, 'ready');
      assert.notEqual(ready.upstreams.optional, 'ready');

      const crash = request('tools/call', { name: 'crash', arguments: {} });
      await post(`${gateway.url}/servers/a/mcp`, crash, headersFor(crash));
      let seen: any;
      await eventually(async () => {
        const answer = await fetch(`${gateway.url}/readyz`);
        seen = await answer.json();
        return answer.status === 503;
      }, 10_000);
      assert.equal(seen.status, 'not ready');
      assert.deepEqual(
        seen.notReady.map((n: any) => n.server),
        ['a'],
      );
      await eventually(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 20_000);
    },
  );

  test('/metrics changes as requests flow: counts by endpoint, method and outcome; upstream state; cache', async () => {
    const scrape = async () => (await fetch(`${gateway.url}/metrics`)).text();
    const value = (text: string, series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line ? Number(line.slice(series.length + 1)) : 0;
    };
    const okCalls = 'mcp_gateway_requests_total{endpoint="b",method="tools/call",outcome="ok"}';
    const errors = 'mcp_gateway_requests_total{endpoint="mcp",method="tools/call",outcome="error"}';
    const before = await scrape();
    for (let i = 0; i < 3; i++) {
      const call = request('tools/call', { name: 'echo', arguments: { text: `m${i}` } });
      await post(`${gateway.url}/servers/b/mcp`, call, headersFor(call));
    }
    const unknown = request('tools/call', { name: 'b__nope', arguments: {} });
    await post(`${gateway.url}/mcp`, unknown, headersFor(unknown));
    const list = request('tools/list');
    await post(`${gateway.url}/servers/b/mcp`, list, headersFor(list));
    const after = await scrape();
    assert.equal(value(after, okCalls) - value(before, okCalls), 3);
    assert.equal(value(after, errors) - value(before, errors), 1);
    assert.equal(value(after, 'mcp_gateway_upstream_state{server="b",state="ready"}'), 1);
    assert.equal(value(after, 'mcp_gateway_upstream_state{server="b",state="starting"}'), 0);
    assert.ok(
      value(after, 'mcp_gateway_cache_hits_total') + value(after, 'mcp_gateway_cache_misses_total') >
        value(before, 'mcp_gateway_cache_hits_total') + value(before, 'mcp_gateway_cache_misses_total'),
    );
    assert.match(
      after,
      /^mcp_gateway_request_duration_seconds_bucket\{le="0\.005",endpoint="b",method="tools\/call"\} \d+$/m,
    );
    assert.equal(value(after, 'mcp_gateway_requests_in_flight'), 0);
  });

  test('/status.json lists every upstream with its state, era, restarts and tool count', async () => {
    const status = await (await fetch(`${gateway.url}/status.json`)).json();
    const byName = Object.fromEntries(status.upstreams.map((u: any) => [u.name, u]));
    assert.deepEqual(Object.keys(byName), ['a', 'b', 'optional']);
    assert.equal(byName.b.state, 'ready');
    assert.equal(byName.b.era, 'modern');
    assert.equal(byName.b.transport, 'stdio');
    assert.ok(byName.b.toolCount > 3, JSON.stringify(byName.b));
    assert.ok(byName.a.restarts >= 1, 'the crash above restarted a');
    assert.notEqual(byName.optional.state, 'ready');
    assert.match(byName.optional.lastError ?? '', /no-such-program-mcp-gw/);
  });
});

describe('operator pages behind authentication', () => {
  let gateway: RunningGateway;
  const dir = tempDir('mcp-gw-ops-');
  before(async () => {
    gateway = await startTestGateway(
      { a: fixture('modern-server') },
      {},
      {
        auth: { apiKeys: [{ key: 'operator-key-0123456789', principal: 'op' }], operators: { ids: ['op'] } },
        policies: [{ name: 'op', principals: { ids: ['op'] }, allow: { tools: ['a__echo'] } }],
        audit: { destination: path.join(dir, 'audit.jsonl') },
      },
    );
  });
  after(() => gateway?.close());

  test('/healthz and /readyz answer anyone; /status.json, / and /metrics want credentials', async () => {
    assert.equal((await fetch(`${gateway.url}/healthz`)).status, 200);
    assert.notEqual((await fetch(`${gateway.url}/readyz`)).status, 401);
    for (const page of ['/status.json', '/', '/metrics']) {
      const anonymous = await fetch(`${gateway.url}${page}`);
      assert.equal(anonymous.status, 401, page);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer/);
      const operator = await fetch(`${gateway.url}${page}`, {
        headers: { authorization: 'Bearer operator-key-0123456789' },
      });
      assert.notEqual(operator.status, 401, page);
      await operator.text();
    }
  });

  test("a denial shows in the status data, and the audit line carries the request's trace id", async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const call = request('tools/call', {
      name: 'a__crash',
      arguments: {},
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        traceparent,
      },
    });
    const answer = await send(`${gateway.url}/mcp`, call, { authorization: 'Bearer operator-key-0123456789' });
    assert.equal(answer.body.error.code, -32602);
    const status = await (
      await fetch(`${gateway.url}/status.json`, { headers: { authorization: 'Bearer operator-key-0123456789' } })
    ).json();
    assert.deepEqual(
      status.recentDenials.map((d: any) => [d.principal, d.method, d.target]),
      [['op', 'tools/call', 'a__crash']],
    );
    await gateway.security.current.audit!.flush();
    const lines = readFileSync(path.join(dir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const denied = lines.find((l) => l.target === 'a__crash');
    assert.equal(denied.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  });
});

describe('shutdown', () => {
  const inFlight = async (gateway: RunningGateway): Promise<number> => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('mcp_gateway_requests_in_flight '));
    return line ? Number(line.split(' ')[1]) : 0;
  };

  test('close() lets calls in flight finish, then stops', async () => {
    const gateway = await startTestGateway({ a: fixture('modern-server') });
    // Each call lasts long enough for all five to be in flight at once on a loaded machine: at 700 ms the first
    // had finished before the fifth arrived (a CI-like run at load 30), and in flight never read 5.
    const slow = (i: number) => {
      const call = request('tools/call', { name: 'slow', arguments: { ms: 5_000 } }, `slow-${i}`);
      return post(`${gateway.url}/servers/a/mcp`, call, headersFor(call));
    };
    const warm = request('tools/call', { name: 'echo', arguments: { text: 'warm' } });
    await post(`${gateway.url}/servers/a/mcp`, warm, headersFor(warm));
    const calls = Array.from({ length: 5 }, (_, i) => slow(i));
    await eventually(async () => (await inFlight(gateway)) === 5, 10_000);
    const closing = gateway.close();
    const answers = await Promise.all(calls);
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.ok(answer.body.result, JSON.stringify(answer.body));
    }
    await closing;
    await assert.rejects(fetch(`${gateway.url}/healthz`), 'the listener is closed');
  });
  // What a request sees while the gateway drains (/readyz, listen.drainDelayMs, Connection: close) is in drain.test.ts.
});

describe('who may read operator pages', () => {
  let gateway: RunningGateway;
  const dir = tempDir('mcp-gw-ops-who-');
  before(async () => {
    gateway = await startTestGateway(
      { a: fixture('modern-server') },
      {},
      {
        auth: {
          anonymous: true,
          apiKeys: [
            { key: 'operator-key-0123456789', principal: 'olga', groups: ['ops'] },
            { key: 'developer-key-012345678', principal: 'dev', groups: ['devs'] },
          ],
          operators: { groups: ['ops'] },
        },
        audit: { destination: path.join(dir, 'audit.jsonl') },
      },
    );
  });
  after(() => gateway?.close());

  const get = (page: string, headers: Record<string, string> = {}) => fetch(`${gateway.url}${page}`, { headers });

  test(
    'anonymous callers never, even where anonymous MCP calls are allowed; principals outside auth.operators ' +
      'get 403',
    async () => {
      for (const page of ['/status.json', '/', '/metrics']) {
        const anonymous = await get(page);
        assert.equal(anonymous.status, 403, page);
        assert.match((await anonymous.json()).error.message, /operator's credentials/);
        const developer = await get(page, { authorization: 'Bearer developer-key-012345678' });
        assert.equal(developer.status, 403, page);
        assert.match((await developer.json()).error.message, /dev is not among auth\.operators/);
        const operator = await get(page, { authorization: 'Bearer operator-key-0123456789' });
        assert.equal(operator.status, 200, page);
        await operator.text();
      }
      // MCP itself still serves anonymous callers here.
      const call = request('tools/call', { name: 'echo', arguments: { text: 'anon' } });
      assert.equal((await post(`${gateway.url}/servers/a/mcp`, call, headersFor(call))).status, 200);
    },
  );

  test(
    'a foreign Origin, ' + 'or a Host that is not loopback on a loopback listener (DNS rebinding), gets 403',
    async () => {
      const operator = { authorization: 'Bearer operator-key-0123456789' };
      assert.equal((await get('/status.json', { ...operator, origin: 'https://evil.example' })).status, 403);
      const rebound = await new Promise<number>((resolve, reject) => {
        const url = new URL(`${gateway.url}/status.json`);
        http
          .get(
            {
              host: url.hostname,
              port: url.port,
              path: url.pathname,
              headers: { ...operator, host: `evil.example:${url.port}` },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode!);
            },
          )
          .on('error', reject);
      });
      assert.equal(rebound, 403);
    },
  );
});
