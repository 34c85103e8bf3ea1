// /metrics per upstream (issue 19), end to end: calls made through the gateway show up as duration
// histograms by server and method, errors by kind (the server's own error, a timeout, a crash), tool calls by
// tool and outcome, live gauges (listen streams, cache bytes, MRTR holds), and — for a scraper that asks for
// OpenMetrics — exemplars with the trace id the request's traceparent carried.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { eventually, fixture, openListen, post, request, ROOT, startTestGateway } from './harness.js';

/** A server whose tools/list says how long it stays fresh, so the gateway caches it. */
const synthetic = { command: process.execPath, args: ['test/fixtures/synthetic-server.mjs'], cwd: ROOT };

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = `00-${TRACE}-b7ad6b7169203331-01`;

/** A sample's value from an exposition, labels in any order; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (
      Object.keys(have).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => have[k] === v)
    )
      return Number(match[3]);
  }
  return undefined;
}

async function scrape(url: string, accept?: string): Promise<{ type: string; text: string }> {
  const response = await fetch(`${url}/metrics`, { headers: accept ? { accept } : {} });
  assert.equal(response.status, 200);
  return { type: response.headers.get('content-type') ?? '', text: await response.text() };
}

describe('per-upstream metrics on /metrics', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway({
      alpha: fixture('modern-server'),
      beta: fixture('modern-server', { timeoutMs: 500 }),
      cached: synthetic,
    });
    await eventually(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000);
  });
  after(() => gateway?.close());

  test('durations by server and method, errors by kind, tool calls by tool and outcome', async () => {
    const alpha = `${gateway.url}/servers/alpha/mcp`;
    const beta = `${gateway.url}/servers/beta/mcp`;
    for (let i = 0; i < 3; i++) {
      const echo = await post(alpha, request('tools/call', { name: 'echo', arguments: { text: `hi ${i}` } }));
      assert.equal(echo.body?.result?.content?.[0]?.text, `hi ${i}`);
    }
    const unknown = await post(alpha, request('tools/call', { name: 'no-such-tool', arguments: {} }));
    assert.ok(unknown.body?.error, `an unknown tool is a JSON-RPC error: ${JSON.stringify(unknown.body)}`);
    const slow = await post(beta, request('tools/call', { name: 'slow', arguments: { ms: 5_000 } }));
    assert.match(slow.body?.error?.message ?? '', /within 500 ms/, 'beta timed out');
    const crash = await post(beta, request('tools/call', { name: 'crash', arguments: {} }));
    assert.match(crash.body?.error?.message ?? '', /exited with code 3/);

    const { type, text } = await scrape(gateway.url);
    assert.match(type, /^text\/plain; version=0\.0\.4/);
    const count = 'mcp_gateway_upstream_request_duration_seconds_count';
    assert.equal(sample(text, count, { server: 'alpha', method: 'tools/call' }), 4);
    assert.equal(sample(text, count, { server: 'beta', method: 'tools/call' }), 2);
    const errors = 'mcp_gateway_upstream_errors_total';
    assert.equal(sample(text, errors, { server: 'alpha', method: 'tools/call', kind: 'jsonrpc' }), 1);
    assert.equal(sample(text, errors, { server: 'beta', method: 'tools/call', kind: 'timeout' }), 1);
    assert.equal(sample(text, errors, { server: 'beta', method: 'tools/call', kind: 'unreachable' }), 1);
    const tools = 'mcp_gateway_tool_calls_total';
    assert.equal(sample(text, tools, { server: 'alpha', tool: 'echo', outcome: 'ok' }), 3);
    assert.equal(
      sample(text, tools, { server: 'alpha', tool: '_other', outcome: 'error' }),
      1,
      'an unknown tool is not named',
    );
    assert.equal(sample(text, tools, { server: 'alpha', tool: 'no-such-tool', outcome: 'error' }), undefined);
    assert.doesNotMatch(text, /trace_id/, 'no exemplars in the classic text');
  });

  test('OpenMetrics on request, with the trace id of the request as the exemplar', async () => {
    const call = request('tools/call', {
      name: 'echo',
      arguments: { text: 'traced' },
      _meta: { traceparent: TRACEPARENT },
    });
    assert.equal((await post(`${gateway.url}/servers/alpha/mcp`, call)).body?.result?.content?.[0]?.text, 'traced');
    const { type, text } = await scrape(
      gateway.url,
      'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
    );
    assert.match(type, /^application\/openmetrics-text; version=1\.0\.0/);
    assert.match(text, /# EOF\n$/);
    assert.match(
      text,
      new RegExp(
        `^mcp_gateway_upstream_request_duration_seconds_bucket\\{[^}]*server="alpha",method="tools/call"\\} \\d+ # ` +
          `\\{trace_id="${TRACE}"\\} `,
        'm',
      ),
    );
    assert.match(text, /^# TYPE mcp_gateway_requests counter$/m);
    assert.match(text, /^mcp_gateway_requests_total\{/m);
    // The classic text is unchanged by an OpenMetrics scrape.
    const classic = await scrape(gateway.url);
    assert.match(classic.text, /^# TYPE mcp_gateway_requests_total counter$/m);
  });

  test('listen streams open, cache bytes and MRTR holds, read at scrape', async () => {
    const list = await post(`${gateway.url}/servers/cached/mcp`, request('tools/list'));
    assert.ok(Array.isArray(list.body?.result?.tools));
    const listen = await openListen(`${gateway.url}/servers/alpha/mcp`, { toolsListChanged: true });
    try {
      await eventually(
        async () => sample((await scrape(gateway.url)).text, 'mcp_gateway_listen_streams_open', {}) === 1,
        5_000,
      );
      const { text } = await scrape(gateway.url);
      assert.ok((sample(text, 'mcp_gateway_cache_bytes', {}) ?? 0) > 0, 'the cached tools/list takes bytes');
      assert.equal(sample(text, 'mcp_gateway_mrtr_held_calls', {}), 0);
    } finally {
      listen.close();
    }
    await eventually(
      async () => sample((await scrape(gateway.url)).text, 'mcp_gateway_listen_streams_open', {}) === 0,
      5_000,
    );
  });
});
