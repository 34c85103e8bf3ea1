// A reload that removes a server takes its metric series with it (issue #19): once the server has stopped,
// /metrics (classic text and OpenMetrics) names it nowhere — upstream durations, errors, tool calls, queue
// waits, and its endpoint's request counts — while the servers that stay keep theirs. Added back, it
// starts counting from nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { eventually, fixture, post, request, ROOT, startTestGateway } from './harness.js';

const OPENMETRICS = 'application/openmetrics-text; version=1.0.0';
const alpha = fixture('modern-server');
// One request at a time, so that a second concurrent call queues and its wait is observed.
const beta = fixture('modern-server', { maxInFlight: 1 });

async function scrape(url: string, accept?: string): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers: accept ? { accept } : {} });
  assert.equal(response.status, 200);
  return response.text();
}

/** The sample lines that name `server` in a server or endpoint label. */
const linesNaming = (text: string, server: string) =>
  text.split('\n').filter((l) => !l.startsWith('#') && new RegExp(`(server|endpoint)="${server}"`).test(l));
const metricNames = (lines: string[]) => new Set(lines.map((l) => l.split(/[{ ]/)[0]));

describe('metric series of a server a reload removed', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway({ alpha, beta });
    await eventually(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000);
    const call = (server: string, name: string, args: Record<string, unknown>) =>
      post(`${gateway.url}/servers/${server}/mcp`, request('tools/call', { name, arguments: args }));
    for (const server of ['alpha', 'beta']) {
      assert.equal((await call(server, 'echo', { text: 'hi' })).body.result.content[0].text, 'hi');
      assert.ok((await call(server, 'no-such-tool', {})).body.error, 'an unknown tool is a JSON-RPC error');
    }
    const slow = await Promise.all([call('beta', 'slow', { ms: 300 }), call('beta', 'slow', { ms: 300 })]);
    for (const answer of slow) assert.ok(answer.body.result, JSON.stringify(answer.body));
  });
  after(() => gateway?.close());

  test('are there before the reload', async () => {
    const names = metricNames(linesNaming(await scrape(gateway.url), 'beta'));
    for (const name of [
      'mcp_gateway_upstream_request_duration_seconds_count',
      'mcp_gateway_upstream_errors_total',
      'mcp_gateway_tool_calls_total',
      'mcp_gateway_upstream_queue_wait_seconds_count',
      'mcp_gateway_requests_total',
      'mcp_gateway_request_duration_seconds_count',
    ])
      assert.ok(names.has(name), `${name} names beta: ${[...names].join(', ')}`);
  });

  test('are gone once it has stopped, in both formats; the servers that stay keep theirs', async () => {
    const alphaBefore = linesNaming(await scrape(gateway.url), 'alpha').filter(
      (l) => !/_in_flight|_queued|_state|_restarts|_era/.test(l.split(/[{ ]/)[0]!),
    );
    assert.ok(alphaBefore.length > 0);
    await gateway.reload(parseConfig({ listen: { port: 0 }, servers: { alpha } }, 'test', ROOT));
    await eventually(async () => linesNaming(await scrape(gateway.url), 'beta').length === 0, 20_000);
    assert.deepEqual(linesNaming(await scrape(gateway.url, OPENMETRICS), 'beta'), []);
    const alphaAfter = new Set(linesNaming(await scrape(gateway.url), 'alpha'));
    for (const line of alphaBefore) assert.ok(alphaAfter.has(line), `alpha's series unchanged: ${line}`);
  });

  test('start from nothing when the server is added back', async () => {
    await gateway.reload(parseConfig({ listen: { port: 0 }, servers: { alpha, beta } }, 'test', ROOT));
    const answer = await post(
      `${gateway.url}/servers/beta/mcp`,
      request('tools/call', { name: 'echo', arguments: { text: 'back' } }),
    );
    assert.equal(answer.body.result.content[0].text, 'back');
    const lines = linesNaming(await scrape(gateway.url), 'beta');
    const count = lines.find(
      (l) => l.startsWith('mcp_gateway_upstream_request_duration_seconds_count{') && l.includes('method="tools/call"'),
    );
    assert.match(count ?? '', / 1$/, lines.join('\n'));
    assert.ok(
      !lines.some((l) => l.startsWith('mcp_gateway_upstream_errors_total')),
      'no error counted since it came back',
    );
  });
});
