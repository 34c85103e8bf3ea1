// Tracing end to end (issue #19): a gateway exporting to an OTLP/HTTP receiver in this process, over JSON
// and over protobuf. One trace per request, the server span over the client span of each upstream call;
// the caller's context kept (header first, then _meta); the context handed on to a stdio server in _meta
// and to an HTTP server as the traceparent header; an upstream error marks both spans; audit lines carry
// the ids; with tracing off nothing reaches the receiver.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { startModernHttpServer, type ModernHttpServer } from '../fixtures/http-servers.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../otlp-receiver.js';
import { tempDir } from '../temp.js';
import { request, startTestGateway, send, recordingServer } from './harness.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const KEY = 'tracing-test-key-0123456789';

const recording = (file: string) => recordingServer(file, { id: 'rec' });
const traceparent = (trace: string, span: string) => `00-${trace}-${span}-01`;
const hex = (n: number, seed: string) => seed.repeat(n).slice(0, n);

function spansOf(receiver: OtlpReceiver, traceId: string): ReceivedSpan[] {
  return receiver.spans.filter((s) => s.traceId === traceId);
}

/** What the stdio server received for the request with this JSON-RPC method and tool name. */
function recordedCall(file: string, name: string): any {
  const lines = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return lines.find((m) => m.method === 'tools/call' && m.params?.name === name);
}

describe('tracing over OTLP/HTTP JSON', () => {
  let receiver: OtlpReceiver;
  let web: ModernHttpServer;
  let gateway: RunningGateway;
  const dir = tempDir('mcp-gateway-tracing-');
  const recordFile = path.join(dir, 'received.jsonl');
  const auditFile = path.join(dir, 'audit.jsonl');
  const HEADER_TRACE = hex(32, 'a1b2');
  const HEADER_SPAN = hex(16, 'c3d4');
  const META_TRACE = hex(32, 'e5f6');
  const META_SPAN = hex(16, '0718');
  const WEB_TRACE = hex(32, '2a3b');
  const ERROR_TRACE = hex(32, '4c5d');
  const LIST_TRACE = hex(32, '6e7f');

  before(async () => {
    receiver = await startOtlpReceiver();
    web = await startModernHttpServer();
    gateway = await startTestGateway(
      { rec: recording(recordFile), web: { url: web.url } },
      {},
      {
        telemetry: {
          serviceName: 'gateway-under-test',
          traces: { endpoint: receiver.url, protocol: 'http/json', sampler: 'always_on' },
        },
        auth: { apiKeys: [{ key: KEY, principal: 'tester' }] },
        audit: { destination: auditFile },
      },
    );
    const call = (server: string, body: ReturnType<typeof request>, extra: Record<string, string> = {}) =>
      send(`${gateway.url}/servers/${server}/mcp`, body, { authorization: `Bearer ${KEY}`, ...extra });

    const echo = request(
      'tools/call',
      { name: 'echo', arguments: { text: 'hi' }, _meta: { traceparent: traceparent(META_TRACE, META_SPAN) } },
      'echo-1',
    );
    assert.equal(
      (await call('rec', echo, { traceparent: traceparent(HEADER_TRACE, HEADER_SPAN), tracestate: 'vendor=1' })).status,
      200,
    );
    const fromMeta = request(
      'tools/call',
      { name: 'tool-0', arguments: {}, _meta: { traceparent: traceparent(META_TRACE, META_SPAN) } },
      'meta-1',
    );
    assert.equal((await call('rec', fromMeta)).status, 200);
    const root = request('tools/call', { name: 'tool-1', arguments: {} }, 'root-1');
    assert.equal((await call('rec', root)).status, 200);
    const remote = request('tools/call', { name: 'echo', arguments: { text: 'over http' } }, 'web-1');
    assert.equal((await call('web', remote, { traceparent: traceparent(WEB_TRACE, HEADER_SPAN) })).status, 200);
    const failing = request('tools/call', { name: 'no-such-tool', arguments: {} }, 'fail-1');
    const failed = await call('rec', failing, { traceparent: traceparent(ERROR_TRACE, HEADER_SPAN) });
    assert.equal(failed.body.error.code, -32602);
    const list = request('tools/list', {}, 'list-1');
    assert.equal((await call('rec', list, { traceparent: traceparent(LIST_TRACE, HEADER_SPAN) })).status, 200);
    await gateway.security.current.audit!.flush();
    // Closing sends what the batch processor still holds.
    await gateway.close();
  });

  after(async () => {
    await web?.close();
    await receiver?.close();
  });

  it('exports as JSON, under the configured service name', () => {
    assert.ok(receiver.contentTypes.length > 0);
    assert.ok(
      receiver.contentTypes.every((t) => t.startsWith('application/json')),
      receiver.contentTypes.join(),
    );
    assert.equal(receiver.spans[0]!.resource['service.name'], 'gateway-under-test');
  });

  it('keeps the trace id of the traceparent header (over _meta), with the server span over the client span', () => {
    const spans = spansOf(receiver, HEADER_TRACE);
    assert.equal(spans.length, 2, JSON.stringify(spans.map((s) => s.name)));
    const server = spans.find((s) => s.kind === SERVER)!;
    const client = spans.find((s) => s.kind === CLIENT)!;
    assert.equal(server.parentSpanId, HEADER_SPAN);
    assert.equal(client.parentSpanId, server.spanId);
    assert.equal(server.name, 'tools/call echo');
    assert.equal(client.name, 'tools/call echo');
    for (const span of [server, client]) {
      assert.equal(span.attributes['mcp.method.name'], 'tools/call');
      assert.equal(span.attributes['gen_ai.tool.name'], 'echo');
      assert.equal(span.attributes['jsonrpc.request.id'], 'echo-1');
      assert.equal(span.attributes['mcp.protocol.version'], '2026-07-28');
      assert.equal(span.status.code === ERROR, false);
    }
    assert.equal(server.attributes['network.transport'], 'tcp');
    assert.equal(server.attributes['mcp.server.name'], 'rec');
    assert.equal(client.attributes['mcp.server.name'], 'rec');
    assert.equal(client.attributes['network.transport'], 'pipe');
    const authenticated = server.events.find((e) => e.name === 'mcp.gateway.authenticated');
    assert.equal(authenticated?.attributes['mcp.gateway.principal.via'], 'api-key', JSON.stringify(server.events));
    const policy = server.events.find((e) => e.name === 'mcp.gateway.policy')!;
    assert.equal(policy.attributes['mcp.gateway.decision'], 'allow');
  });

  it('hands the client span on to a stdio server in _meta.traceparent', () => {
    const client = spansOf(receiver, HEADER_TRACE).find((s) => s.kind === CLIENT)!;
    const received = recordedCall(recordFile, 'echo');
    assert.equal(received.params._meta.traceparent, traceparent(HEADER_TRACE, client.spanId));
    assert.equal(received.params._meta.tracestate, 'vendor=1');
  });

  it('takes the parent from _meta when no header carries one, and starts a new trace when neither does', () => {
    const fromMeta = spansOf(receiver, META_TRACE);
    assert.equal(fromMeta.length, 2);
    assert.equal(fromMeta.find((s) => s.kind === SERVER)!.parentSpanId, META_SPAN);
    const root = receiver.spans.find((s) => s.kind === SERVER && s.attributes['jsonrpc.request.id'] === 'root-1')!;
    assert.equal(root.parentSpanId, '');
    assert.ok(/^[0-9a-f]{32}$/.test(root.traceId) && !/^0+$/.test(root.traceId));
    assert.equal(spansOf(receiver, root.traceId).length, 2, 'one trace per request');
  });

  it('hands the client span on to an HTTP server as the traceparent header', () => {
    const client = spansOf(receiver, WEB_TRACE).find((s) => s.kind === CLIENT)!;
    assert.equal(client.attributes['network.transport'], 'tcp');
    const sent = web.requests.filter((h) => h['mcp-method'] === 'tools/call');
    assert.ok(
      sent.some((h) => h.traceparent === traceparent(WEB_TRACE, client.spanId)),
      JSON.stringify(sent.map((h) => h.traceparent)),
    );
  });

  it('marks both spans when the upstream answers with an error', () => {
    const spans = spansOf(receiver, ERROR_TRACE);
    for (const kind of [SERVER, CLIENT]) {
      const span = spans.find((s) => s.kind === kind)!;
      assert.equal(span.status.code, ERROR, `kind ${kind}`);
      assert.equal(span.attributes['error.type'], '-32602');
    }
  });

  it('records the cache lookup of a cacheable request', () => {
    const server = spansOf(receiver, LIST_TRACE).find((s) => s.kind === SERVER)!;
    const lookup = server.events.find((e) => e.name === 'mcp.gateway.cache');
    assert.ok(lookup, server.events.map((e) => e.name).join());
    assert.equal(typeof lookup.attributes['mcp.gateway.cache.hit'], 'boolean');
  });

  it('puts trace_id and span_id on audit lines', () => {
    const lines = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const line = lines.find((l) => l.trace_id === HEADER_TRACE);
    assert.ok(line, JSON.stringify(lines));
    assert.equal(line.span_id, spansOf(receiver, HEADER_TRACE).find((s) => s.kind === SERVER)!.spanId);
  });
});

describe('tracing over OTLP/HTTP protobuf', () => {
  it('exports the same structure as protobuf', async () => {
    const receiver = await startOtlpReceiver();
    const dir = tempDir('mcp-gateway-tracing-pb-');
    const recordFile = path.join(dir, 'received.jsonl');
    const gateway = await startTestGateway(
      { rec: recording(recordFile) },
      {},
      { telemetry: { traces: { tracesEndpoint: `${receiver.url}/v1/traces`, protocol: 'http/protobuf' } } },
    );
    try {
      const trace = hex(32, '9a8b');
      const body = request('tools/call', { name: 'echo', arguments: { text: 'pb' } }, 7);
      assert.equal(
        (await send(`${gateway.url}/servers/rec/mcp`, body, { traceparent: traceparent(trace, hex(16, '1c2d')) }))
          .status,
        200,
      );
    } finally {
      await gateway.close();
      await receiver.close();
    }
    assert.ok(
      receiver.contentTypes.every((t) => t === 'application/x-protobuf'),
      receiver.contentTypes.join(),
    );
    const spans = spansOf(receiver, hex(32, '9a8b'));
    const server = spans.find((s) => s.kind === SERVER)!;
    const client = spans.find((s) => s.kind === CLIENT)!;
    assert.equal(server.parentSpanId, hex(16, '1c2d'));
    assert.equal(client.parentSpanId, server.spanId);
    assert.equal(server.attributes['jsonrpc.request.id'], '7');
    assert.equal(client.attributes['gen_ai.tool.name'], 'echo');
    assert.equal(server.resource['service.name'], 'mcp-gateway');
    assert.equal(
      recordedCall(recordFile, 'echo').params._meta.traceparent,
      traceparent(hex(32, '9a8b'), client.spanId),
    );
  });
});

describe('tracing off', () => {
  it('exports nothing and leaves what reaches the server as it came', async () => {
    const receiver = await startOtlpReceiver();
    const dir = tempDir('mcp-gateway-tracing-off-');
    const recordFile = path.join(dir, 'received.jsonl');
    // An endpoint is given, but tracing is switched off: nothing may be sent.
    const gateway = await startTestGateway(
      { rec: recording(recordFile) },
      {},
      { telemetry: { traces: { enabled: false, endpoint: receiver.url } } },
    );
    try {
      const body = request('tools/call', { name: 'echo', arguments: { text: 'off' } });
      assert.equal(
        (
          await send(`${gateway.url}/servers/rec/mcp`, body, {
            traceparent: traceparent(hex(32, '5e6f'), hex(16, '7a8b')),
          })
        ).status,
        200,
      );
    } finally {
      await gateway.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    await receiver.close();
    assert.deepEqual(receiver.contentTypes, []);
    assert.equal(recordedCall(recordFile, 'echo').params._meta.traceparent, undefined);
  });
});
