// MRTR holds on a traced request's span (issue #19): when a 2025 server asks mid-call, the request that
// held the call carries an mcp.gateway.mrtr.hold event (what was asked, the round, how long it is held),
// and each retry a resume event for the round it answers — then a hold again if the server asks once more.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../otlp-receiver.js';
import { fixture, META, startTestGateway, send } from './harness.js';

const SERVER = 2;
const HOLD_MS = 45_000;
const trace = (seed: string) => seed.repeat(32).slice(0, 32);
const traceparent = (traceId: string) => `00-${traceId}-${'ab'.repeat(8)}-01`;

describe('MRTR holds on the request span', () => {
  let receiver: OtlpReceiver;
  let gateway: RunningGateway;
  const FIRST = trace('1f');
  const SECOND = trace('2e');
  const THIRD = trace('3d');
  const PLAIN = trace('4c');

  before(async () => {
    receiver = await startOtlpReceiver();
    gateway = await startTestGateway(
      { legacy: fixture('legacy-server') },
      {},
      {
        mrtr: { holdMs: HOLD_MS },
        telemetry: { traces: { endpoint: receiver.url, protocol: 'http/protobuf', sampler: 'always_on' } },
      },
    );
    const url = `${gateway.url}/servers/legacy/mcp`;
    const meta = { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
    const first = {
      jsonrpc: '2.0' as const,
      id: 'first',
      method: 'tools/call',
      params: { name: 'ask-twice', arguments: { topic: 'spans' }, _meta: meta },
    };
    const sendTraced = (body: { method: string; params: Record<string, unknown> }, traceId: string) =>
      send(url, body, { traceparent: traceparent(traceId) });
    const retry = (id: string, requestState: string, key: string) => ({
      ...first,
      id,
      params: {
        ...first.params,
        requestState,
        inputResponses: { [key]: { action: 'accept', content: { value: id } } },
      },
    });

    const one = (await sendTraced(first, FIRST)).body.result;
    assert.equal(one.resultType, 'input_required', JSON.stringify(one));
    const two = (await sendTraced(retry('second', one.requestState, 'elicitation-1'), SECOND)).body.result;
    assert.equal(two.resultType, 'input_required', JSON.stringify(two));
    const done = (await sendTraced(retry('third', two.requestState, 'elicitation-2'), THIRD)).body.result;
    assert.notEqual(done.resultType, 'input_required');
    const plain = {
      jsonrpc: '2.0' as const,
      id: 'plain',
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'no hold' }, _meta: META },
    };
    assert.ok((await sendTraced(plain, PLAIN)).body.result);
    await gateway.close(); // sends what the batch processor still holds
  });

  after(async () => {
    await gateway?.close();
    await receiver?.close();
  });

  function serverSpan(traceId: string): ReceivedSpan {
    const span = receiver.spans.find((s) => s.traceId === traceId && s.kind === SERVER);
    assert.ok(
      span,
      `a server span in trace ${traceId}: ${JSON.stringify(receiver.spans.map((s) => [s.name, s.traceId]))}`,
    );
    return span;
  }
  const eventsOf = (span: ReceivedSpan, name: string) => span.events.filter((e) => e.name === name);

  it('marks the request that held the call: what the server asked, round 1, the hold time', () => {
    const span = serverSpan(FIRST);
    const holds = eventsOf(span, 'mcp.gateway.mrtr.hold');
    assert.equal(holds.length, 1, JSON.stringify(span.events));
    assert.equal(holds[0]!.attributes['mcp.gateway.mrtr.asks'], 'elicitation/create');
    assert.equal(Number(holds[0]!.attributes['mcp.gateway.mrtr.round']), 1);
    assert.equal(Number(holds[0]!.attributes['mcp.gateway.mrtr.hold_ms']), HOLD_MS);
    assert.equal(eventsOf(span, 'mcp.gateway.mrtr.resume').length, 0);
  });

  it('marks a retry that resumes round 1 and is held again for round 2', () => {
    const span = serverSpan(SECOND);
    const [resume] = eventsOf(span, 'mcp.gateway.mrtr.resume');
    const [hold] = eventsOf(span, 'mcp.gateway.mrtr.hold');
    assert.equal(Number(resume?.attributes['mcp.gateway.mrtr.round']), 1, JSON.stringify(span.events));
    assert.equal(Number(hold?.attributes['mcp.gateway.mrtr.round']), 2);
    assert.ok(span.events.indexOf(resume!) < span.events.indexOf(hold!), 'resumed, then held again');
  });

  it('marks the last retry with its resume only', () => {
    const span = serverSpan(THIRD);
    assert.deepEqual(
      span.events
        .filter((e) => e.name.startsWith('mcp.gateway.mrtr.'))
        .map((e) => [e.name, Number(e.attributes['mcp.gateway.mrtr.round'])]),
      [['mcp.gateway.mrtr.resume', 2]],
    );
  });

  it('leaves a call that was never held without MRTR events', () => {
    const span = serverSpan(PLAIN);
    assert.deepEqual(
      span.events.filter((e) => e.name.startsWith('mcp.gateway.mrtr.')),
      [],
    );
  });
});
