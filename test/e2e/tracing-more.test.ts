// Tracing beyond a modern client's request (issue #19): a 2025 client's session (the SDK 1.x client) gets
// request spans like a modern request, and its calls hand the context on to stdio and HTTP upstreams; a
// retry forwarded to the replica holding its call is a client span, under which the holder's server span
// joins the same trace. Spans go to the OTLP/HTTP receiver in this process.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Redis } from 'ioredis';
import type { RunningGateway } from '../../src/gateway.js';
import { startModernHttpServer, type ModernHttpServer } from '../fixtures/http-servers.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../otlp-receiver.js';
import { tempDir } from '../temp.js';
import { sharedRedis } from '../services.js';
import { eventually, fixture, headersFor, META, post, startTestGateway, send, recordingServer } from './harness.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

const recording = (file: string) => recordingServer(file, { id: 'rec' });
const traceparent = (trace: string, span: string) => `00-${trace}-${span}-01`;
const hex = (n: number, seed: string) => seed.repeat(n).slice(0, n);
const spansOf = (receiver: OtlpReceiver, traceId: string): ReceivedSpan[] =>
  receiver.spans.filter((s) => s.traceId === traceId);

/** What the stdio server received: the tools/call whose arguments carried this text. */
function recordedEcho(file: string, text: string): any {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .find((m) => m.method === 'tools/call' && m.params?.arguments?.text === text);
}

/** A fetch that adds a traceparent header to the POSTs whose body names `marker`, and to nothing else. */
function tracingFetch(marker: string, value: string): typeof fetch {
  return (input, init) => {
    if (typeof init?.body !== 'string' || !init.body.includes(marker)) return fetch(input, init);
    const headers = new Headers(init.headers);
    headers.set('traceparent', value);
    return fetch(input, { ...init, headers });
  };
}

describe('a 2025 client (SDK 1.x) through a traced gateway', () => {
  let receiver: OtlpReceiver;
  let web: ModernHttpServer;
  let gateway: RunningGateway;
  const recordFile = path.join(tempDir('mcp-gateway-tracing-more-'), 'received.jsonl');
  const HEADER_TRACE = hex(32, '1a2b');
  const META_TRACE = hex(32, '3c4d');
  const WEB_TRACE = hex(32, '5e6f');
  const PARENT = hex(16, '7081');

  async function connect(endpoint: string, fetcher?: typeof fetch): Promise<Client1> {
    const client = new Client1({ name: 'sdk1-tracing', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new Transport1(new URL(`${gateway.url}${endpoint}`), fetcher ? { fetch: fetcher } : {}));
    return client;
  }

  before(async () => {
    receiver = await startOtlpReceiver();
    web = await startModernHttpServer();
    gateway = await startTestGateway(
      { rec: recording(recordFile), web: { url: web.url } },
      {},
      { telemetry: { traces: { endpoint: receiver.url, protocol: 'http/protobuf', sampler: 'always_on' } } },
    );
    const rec = await connect('/servers/rec/mcp', tracingFetch('from header', traceparent(HEADER_TRACE, PARENT)));
    try {
      await rec.callTool({ name: 'echo', arguments: { text: 'from header' } });
      await rec.callTool({
        name: 'echo',
        arguments: { text: 'from meta' },
        _meta: { traceparent: traceparent(META_TRACE, PARENT) },
      });
      const failed = await rec.callTool({ name: 'no-such-tool', arguments: {} }).catch((error: Error) => error);
      assert.ok(failed instanceof Error, 'an unknown tool is a JSON-RPC error');
    } finally {
      await rec.close();
    }
    const remote = await connect('/servers/web/mcp', tracingFetch('over http', traceparent(WEB_TRACE, PARENT)));
    try {
      await remote.callTool({ name: 'echo', arguments: { text: 'over http' } });
    } finally {
      await remote.close();
    }
    await gateway.close(); // sends what the batch processor still holds
  });

  after(async () => {
    await web?.close();
    await receiver?.close();
  });

  it('gives a session request a server span (its caller as parent) over the client span of its upstream call', () => {
    const spans = spansOf(receiver, HEADER_TRACE);
    const server = spans.find((s) => s.kind === SERVER);
    const client = spans.find((s) => s.kind === CLIENT);
    assert.ok(server && client, JSON.stringify(spans.map((s) => [s.name, s.kind])));
    assert.equal(server.parentSpanId, PARENT);
    assert.equal(client.parentSpanId, server.spanId);
    assert.equal(server.name, 'tools/call echo');
    assert.equal(server.attributes['mcp.method.name'], 'tools/call');
    assert.equal(server.attributes['gen_ai.tool.name'], 'echo');
    assert.equal(server.attributes['mcp.protocol.version'], '2025-11-25');
    assert.equal(server.attributes['mcp.server.name'], 'rec');
    assert.equal(typeof server.attributes['mcp.session.id'], 'string');
    assert.equal(client.attributes['network.transport'], 'pipe');
  });

  it('hands the client span on to a stdio server in _meta.traceparent', () => {
    const client = spansOf(receiver, HEADER_TRACE).find((s) => s.kind === CLIENT)!;
    assert.equal(
      recordedEcho(recordFile, 'from header').params._meta.traceparent,
      traceparent(HEADER_TRACE, client.spanId),
    );
  });

  it('takes the parent from the 2025 message’s _meta when no header carries one', () => {
    const spans = spansOf(receiver, META_TRACE);
    const server = spans.find((s) => s.kind === SERVER)!;
    assert.equal(server.parentSpanId, PARENT);
    const client = spans.find((s) => s.kind === CLIENT)!;
    assert.equal(
      recordedEcho(recordFile, 'from meta').params._meta.traceparent,
      traceparent(META_TRACE, client.spanId),
    );
  });

  it('marks the session request’s span when the upstream answers with an error', () => {
    const failed = receiver.spans.find((s) => s.kind === SERVER && s.name === 'tools/call no-such-tool');
    assert.ok(failed, JSON.stringify(receiver.spans.map((s) => s.name)));
    assert.equal(failed.status.code, ERROR);
    assert.equal(failed.attributes['error.type'], '-32602');
  });

  it('hands the client span on to an HTTP server as the traceparent header', () => {
    const client = spansOf(receiver, WEB_TRACE).find((s) => s.kind === CLIENT);
    assert.ok(client, JSON.stringify(receiver.spans.map((s) => [s.name, s.traceId])));
    assert.equal(client.attributes['network.transport'], 'tcp');
    const sent = web.requests.filter((h) => h['mcp-method'] === 'tools/call').map((h) => h.traceparent);
    assert.ok(sent.includes(traceparent(WEB_TRACE, client.spanId)), JSON.stringify(sent));
  });

  it('names the initialize request’s span for it', () => {
    assert.ok(receiver.spans.some((s) => s.kind === SERVER && s.name === 'initialize'));
  });
});

const needRedis = await sharedRedis('tracing a retry forwarded between replicas');

describe('a retry forwarded to the replica holding its call', { skip: needRedis.skip }, () => {
  before(needRedis.check);
  const REDIS = 'redis://127.0.0.1:6379';
  const keyPrefix = `tracing-forward-${randomUUID()}:`;
  const RETRY_TRACE = hex(32, '9fa0');
  const CALLER_SPAN = hex(16, 'b1c2');
  let receiver: OtlpReceiver;
  let a: RunningGateway;
  let b: RunningGateway;
  let redis: Redis;
  let holder: string;

  before(async () => {
    receiver = await startOtlpReceiver();
    const rest = {
      cache: { store: 'redis', url: REDIS, keyPrefix },
      mrtr: { secret: 'the tracing replicas share this mrtr secret' },
      telemetry: { traces: { endpoint: receiver.url, protocol: 'http/json', sampler: 'always_on' } },
    };
    [a, b] = await Promise.all([
      startTestGateway({ legacy: fixture('legacy-server') }, {}, rest),
      startTestGateway({ legacy: fixture('legacy-server') }, {}, rest),
    ]);
    redis = new Redis(REDIS, { lazyConnect: true });
    await redis.connect();
    await eventually(async () => (await redis.keys(`${keyPrefix}instance:*`)).length === 2, 10_000);
    const meta = { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
    const first = {
      jsonrpc: '2.0' as const,
      id: 'first',
      method: 'tools/call',
      params: { name: 'ask', arguments: { question: 'Traced?' }, _meta: meta },
    };
    const asked = await post(`${a.url}/servers/legacy/mcp`, first, headersFor(first));
    const requestState = asked.body?.result?.requestState;
    assert.equal(typeof requestState, 'string', JSON.stringify(asked.body));
    holder = JSON.parse(
      Buffer.from(requestState.slice('mcpgw1.'.length, requestState.lastIndexOf('.')), 'base64url').toString('utf8'),
    ).instance;
    const inputResponses = { 'elicitation-1': { action: 'accept', content: { name: 'traced' } } };
    const retry = { ...first, id: 'retry', params: { ...first.params, inputResponses, requestState } };
    const done = await send(`${b.url}/servers/legacy/mcp`, retry, {
      traceparent: traceparent(RETRY_TRACE, CALLER_SPAN),
    });
    assert.deepEqual(JSON.parse(done.body.result.content[0].text), { action: 'accept', content: { name: 'traced' } });
    await Promise.all([a.close(), b.close()]);
  });

  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    if (redis) {
      const keys = await redis.keys(`${keyPrefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
    await receiver?.close();
  });

  it(
    'is a client span under the server span of the replica it reached, ' + 'and the holder serves it in the same trace',
    () => {
      const spans = spansOf(receiver, RETRY_TRACE);
      const servers = spans.filter((s) => s.kind === SERVER);
      const reached = servers.find((s) => s.parentSpanId === CALLER_SPAN);
      assert.ok(reached, JSON.stringify(spans.map((s) => [s.name, s.kind, s.parentSpanId])));
      const forward = spans.find((s) => s.kind === CLIENT && s.parentSpanId === reached.spanId);
      assert.ok(forward, 'the forward is a client span of the replica that took the retry');
      assert.equal(forward.attributes['mcp.gateway.forwarded_to'], holder);
      assert.equal(forward.attributes['http.response.status_code'], 200);
      assert.equal(forward.attributes['server.address'], '127.0.0.1');
      assert.equal(typeof forward.attributes['server.port'], 'number');
      assert.notEqual(forward.status.code, ERROR);
      const held = servers.find((s) => s.parentSpanId === forward.spanId);
      assert.ok(held, "the holder's server span has the forward as its parent");
      assert.equal(held.name, 'tools/call ask');
      assert.ok(
        held.events.some((e) => e.name === 'mcp.gateway.mrtr.resume'),
        JSON.stringify(held.events),
      );
    },
  );
});
