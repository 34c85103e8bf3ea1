// Issue #35, item 4, attacked through the in-process OTLP receiver: a 2025 client's Mcp-Session-Id must not
// reach a trace (with anonymous access it is the whole secret), no attribute taken from a request may be
// long (an unauthenticated request put ~16 KB into one), and only an authenticated caller's traceparent
// parents its span (telemetry.traces.acceptParents, default authenticated).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningGateway } from '../../src/gateway.js';
import { sessionDigest } from '../../src/edge/request-span.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../otlp-receiver.js';
import { tempDir } from '../temp.js';
import { headersFor, post, request, startTestGateway, send, recordingServer } from './harness.js';

const KEY = 'tracing-secrets-key-0123456789';
const traceparent = (trace: string) => `00-${trace}-${'c3d4'.repeat(4)}-01`;
const UNAUTHENTICATED_TRACE = 'a1'.repeat(16);
const ANONYMOUS_TRACE = 'b2'.repeat(16);
const AUTHENTICATED_TRACE = 'c3'.repeat(16);
const LIMIT = 512;

describe('traces keep no session ids, no long request values, and no unauthenticated parents', () => {
  let receiver: OtlpReceiver;
  let gateway: RunningGateway;
  let sessionId = '';
  const dir = tempDir('mcp-gateway-tracing-secrets-');
  const longSession = 's'.repeat(15_000);
  const longId = 'i'.repeat(10_000);

  before(async () => {
    receiver = await startOtlpReceiver();
    gateway = await startTestGateway(
      {
        rec: recordingServer(path.join(dir, 'rec.jsonl'), { id: 'rec', era: 'modern' }),
      },
      {},
      {
        telemetry: { traces: { endpoint: receiver.url, protocol: 'http/json', sampler: 'always_on' } },
        auth: { anonymous: true, apiKeys: [{ key: KEY, principal: 'tester' }] },
      },
    );
    const url = `${gateway.url}/servers/rec/mcp`;
    const echo = (id: string) => request('tools/call', { name: 'echo', arguments: { text: 'hi' } }, id);

    // Unauthenticated: a wrong key, a 15 KB session header and a traceparent.
    const refused = await post(url, echo('unauth-1'), {
      ...headersFor(echo('unauth-1')),
      authorization: 'Bearer wrong-key-0123456789',
      'mcp-session-id': longSession,
      traceparent: traceparent(UNAUTHENTICATED_TRACE),
    });
    assert.equal(refused.status, 401);
    // Anonymous (auth.anonymous: true): served, but not trusted to name its parent.
    const anonymous = await send(url, echo('anon-1'), { traceparent: traceparent(ANONYMOUS_TRACE) });
    assert.equal(anonymous.status, 200, JSON.stringify(anonymous.body));
    // Authenticated, with a 10 KB request id: joins its trace; the id is cut.
    const authenticated = await send(url, echo(longId), {
      authorization: `Bearer ${KEY}`,
      traceparent: traceparent(AUTHENTICATED_TRACE),
    });
    assert.equal(authenticated.status, 200, JSON.stringify(authenticated.body).slice(0, 300));

    // A 2025 client on a session: its session id must not reach the trace; a 2 KB tool name neither in full.
    const client = new Client1({ name: 'tracing-secrets', version: '1.0.0' });
    const transport = new Transport1(new URL(url), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } });
    await client.connect(transport);
    sessionId = transport.sessionId!;
    assert.ok(sessionId.length > 16);
    await client.callTool({ name: 'echo', arguments: { text: 'legacy' } });
    await client.callTool({ name: `x${'y'.repeat(2000)}`, arguments: {} }).catch(() => undefined);
    await client.close();
    await gateway.close(); // sends what the batch processor holds
  });

  after(async () => {
    await receiver?.close();
  });

  const serverSpans = (): ReceivedSpan[] => receiver.spans.filter((s) => s.kind === 2);

  it("mcp.session.id carries a digest of the 2025 client's session id, never the id", () => {
    const withSession = serverSpans().filter(
      (s) =>
        s.attributes['mcp.session.id'] !== undefined && s.attributes['mcp.session.id'] !== sessionDigest(longSession),
    );
    assert.ok(withSession.length >= 2, `spans of the session: ${withSession.length}`);
    for (const span of withSession) assert.equal(span.attributes['mcp.session.id'], sessionDigest(sessionId));
    assert.ok(!JSON.stringify(receiver.spans).includes(sessionId), 'the session id is somewhere in the exported spans');
  });

  it(`no exported attribute, event attribute or span name is longer than ${LIMIT} characters`, () => {
    for (const span of receiver.spans) {
      assert.ok(span.name.length <= 'tools/call '.length + 128, `span name of ${span.name.length} characters`);
      for (const [key, value] of Object.entries(span.attributes))
        assert.ok(String(value).length <= LIMIT, `${span.name}: ${key} has ${String(value).length} characters`);
      for (const event of span.events)
        for (const [key, value] of Object.entries(event.attributes))
          assert.ok(String(value).length <= LIMIT, `${event.name}: ${key} has ${String(value).length} characters`);
    }
    const cut = serverSpans().find((s) => String(s.attributes['jsonrpc.request.id']).startsWith('iii'));
    assert.ok(cut, 'the long-id request was traced');
  });

  it('an unauthenticated or anonymous traceparent does not parent the span; an authenticated one does', () => {
    assert.equal(
      receiver.spans.filter((s) => s.traceId === UNAUTHENTICATED_TRACE).length,
      0,
      'the 401 joined the caller-named trace',
    );
    assert.equal(
      receiver.spans.filter((s) => s.traceId === ANONYMOUS_TRACE).length,
      0,
      'the anonymous call joined the caller-named trace',
    );
    const joined = receiver.spans.filter((s) => s.traceId === AUTHENTICATED_TRACE && s.kind === 2);
    assert.equal(joined.length, 1, 'control: the authenticated call joins its trace');
    // The refused request still left a span, in a trace of its own.
    assert.ok(serverSpans().some((s) => s.attributes['mcp.gateway.outcome'] === 'unauthenticated'));
  });
});
