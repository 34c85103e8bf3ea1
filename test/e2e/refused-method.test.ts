// Issue 36: a request refused before its body is read (401 here, 429 by rate) is counted and shown with the
// method its Mcp-Method header named, not "unknown"; a header naming no MCP method becomes the fixed label
// "other", so a caller cannot grow the metrics' label set or write what it likes into the status page.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, headersFor, post, request, startTestGateway, send } from './harness.js';

const OPERATOR_KEY = 'operator-key-0123456789';
const USER_KEY = 'user-key-0123456789abc';

let gateway: RunningGateway;
before(async () => {
  gateway = await startTestGateway(
    { a: fixture('modern-server') },
    {},
    {
      auth: {
        apiKeys: [
          { key: OPERATOR_KEY, principal: 'op' },
          { key: USER_KEY, principal: 'user' },
        ],
        operators: { ids: ['op'] },
      },
      rateLimit: { requestsPerMinute: 1 },
    },
  );
});
after(() => gateway?.close());

const url = () => `${gateway.url}/servers/a/mcp`;
const asOperator = (page: string) =>
  fetch(`${gateway.url}${page}`, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } });

test(
  'a refused request is counted and shown under the method its Mcp-Method header named, ' + 'bounded to known methods',
  async () => {
    const call = request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    const unauthenticated = await post(url(), call, headersFor(call));
    assert.equal(unauthenticated.status, 401);

    // A header that names no MCP method: counted as "other", never as itself.
    const invented = `made/up-${randomUUID()}`;
    const odd = await send(url(), call, { 'mcp-method': invented });
    assert.equal(odd.status, 401);

    // The user's one request a minute, then a refusal by rate before the body is read.
    const list = request('tools/list');
    assert.equal((await send(url(), list, { authorization: `Bearer ${USER_KEY}` })).status, 200);
    assert.equal((await send(url(), list, { authorization: `Bearer ${USER_KEY}` })).status, 429);

    const metrics = await (await asOperator('/metrics')).text();
    assert.match(
      metrics,
      /mcp_gateway_requests_total\{endpoint="a",method="tools\/call",outcome="unauthenticated"\} 1\n/,
    );
    assert.match(metrics, /mcp_gateway_requests_total\{endpoint="a",method="other",outcome="unauthenticated"\} 1\n/);
    assert.match(metrics, /mcp_gateway_requests_total\{endpoint="a",method="tools\/list",outcome="rate_limited"\} 1\n/);
    assert.doesNotMatch(metrics, /method="unknown"|made\/up/);

    const status = await (await asOperator('/status.json')).json();
    const denied = status.recentDenials.map((d: { principal: string; method: string; rule: string }) => [
      d.principal,
      d.method,
      d.rule.split(':')[0],
    ]);
    assert.deepEqual(denied, [
      ['user', 'tools/list', 'rate limit'], // newest first
      ['anonymous', 'other', 'authentication'],
      ['anonymous', 'tools/call', 'authentication'],
    ]);
    assert.ok(!JSON.stringify(status).includes(invented), 'the invented method is nowhere on the status page');
  },
);
