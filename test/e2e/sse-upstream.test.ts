// A 2024-11-05 HTTP+SSE upstream (transport: sse) built of SDK 1.x's SSEServerTransport: listed and called
// through both endpoints, its mid-call question relayed as input_required, and a stream that drops
// mid-call fails that call at once and is opened again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningGateway } from '../../src/gateway.js';
import { startSseServer, type SseTestServer } from '../fixtures/sse-server.js';
import { eventually, headersFor, post, request, schemaProblems, startTestGateway } from './harness.js';

let server: SseTestServer;
let gateway: RunningGateway;

before(async () => {
  server = await startSseServer();
  gateway = await startTestGateway({ old: { transport: 'sse', url: server.url, timeoutMs: 10_000 } });
});

after(async () => {
  await gateway?.close();
  await server?.close();
});

function call(name: string, args: Record<string, unknown> = {}, capabilities: Record<string, unknown> = {}) {
  return request('tools/call', {
    name,
    arguments: args,
    _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities },
  });
}

describe('an HTTP+SSE upstream', () => {
  test('lists its tools, on its endpoint and on /mcp', async () => {
    const own = await post(`${gateway.url}/servers/old/mcp`, request('tools/list'));
    assert.deepEqual(own.body.result.tools.map((t: any) => t.name).sort(), ['ask', 'drop', 'echo']);
    assert.deepEqual(schemaProblems('tools/list', own.body), []);
    const merged = await post(`${gateway.url}/mcp`, request('tools/list'));
    assert.ok(merged.body.result.tools.some((t: any) => t.name === 'old__echo'));
  });

  test('answers a call, made to look modern', async () => {
    const body = call('echo', { text: 'over sse' });
    const answer = await post(`${gateway.url}/servers/old/mcp`, body, headersFor(body));
    assert.equal(answer.body.result.content[0].text, 'over sse');
    assert.equal(answer.body.result.resultType, 'complete');
    assert.deepEqual(schemaProblems('tools/call', answer.body), []);
  });

  test(
    'a question it asks mid-call reaches the client as input_required, ' + 'and the retry completes the call',
    async () => {
      const first = call('ask', {}, { elicitation: {} });
      const asked = await post(`${gateway.url}/servers/old/mcp`, first, headersFor(first));
      const result = asked.body.result;
      assert.equal(result?.resultType, 'input_required', JSON.stringify(asked.body));
      const [key, question] = Object.entries(result.inputRequests as Record<string, any>)[0]!;
      assert.equal(question.method, 'elicitation/create');
      const retry = {
        ...first,
        id: 'retry-1',
        params: {
          ...first.params,
          inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } },
          requestState: result.requestState,
        },
      };
      const done = await post(`${gateway.url}/servers/old/mcp`, retry, headersFor(retry));
      assert.equal(done.body.result?.content?.[0]?.text, 'hello Ada', JSON.stringify(done.body));
    },
  );

  test('a stream dropped mid-call fails that call at once, and the gateway connects again', async () => {
    const before = server.connections();
    const body = call('drop');
    const started = Date.now();
    const answer = await post(`${gateway.url}/servers/old/mcp`, body, headersFor(body));
    assert.equal(answer.body.error?.code, -32603, JSON.stringify(answer.body));
    assert.match(answer.body.error.message, /event stream closed.*while handling tools\/call; mcp-gateway reconnects/);
    assert.ok(Date.now() - started < 5_000, 'not left to its timeout');
    await eventually(() => server.connections() > before, 10_000);
    await eventually(async () => {
      const again = call('echo', { text: 'back' });
      const reply = await post(`${gateway.url}/servers/old/mcp`, again, headersFor(again));
      return reply.body.result?.content?.[0]?.text === 'back';
    }, 10_000);
  });
});

describe('era: auto on a url: server', () => {
  test(
    'finds an HTTP+SSE server behind the URL (its POST refused, ' + 'its GET an event stream) and serves it so',
    async () => {
      const detected = await startTestGateway({ found: { url: server.url, timeoutMs: 10_000 } });
      try {
        const list = await post(`${detected.url}/servers/found/mcp`, request('tools/list'));
        assert.deepEqual(
          list.body.result?.tools?.map((t: any) => t.name).sort(),
          ['ask', 'drop', 'echo'],
          JSON.stringify(list.body),
        );
        const body = call('echo', { text: 'found' });
        const answer = await post(`${detected.url}/servers/found/mcp`, body, headersFor(body));
        assert.equal(answer.body.result?.content?.[0]?.text, 'found');
        assert.equal(detected.upstreams.get('found')!.status().era, 'legacy');
      } finally {
        await detected.close();
      }
    },
  );
});
