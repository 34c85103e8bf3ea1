// The samplers a deployment can choose (telemetry.traces.sampler / OTEL_TRACES_SAMPLER), run for real: a
// gateway per sampler exporting to an OTLP receiver in this process, a recording stdio server behind it,
// and requests with a sampled parent, an unsampled parent (trace flags 00) or none. What each sampler
// decides shows twice: whether the trace reaches the receiver, and the trace flags the upstream is handed
// in _meta.traceparent (so a server never records what the gateway dropped, nor the reverse).
//
// The ratio samplers are given trace ids whose decision is known: the SDK's TraceIdRatioBased sampler
// (@opentelemetry/sdk-trace 2.x) samples when the XOR of the id's four 32-bit words is below
// ratio × 0xffffffff, so at 0.5 an id ending in 00000001 (words 0 elsewhere) is in, one ending in f0000000 out.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startOtlpReceiver } from '../otlp-receiver.js';
import { tempDir } from '../temp.js';
import { request, send, startTestGateway, recordingServer } from './harness.js';

const KEY = 'tracing-samplers-key-0123456789';
const SERVER = 2;

type Parent = 'sampled' | 'unsampled' | 'none';
interface Case {
  parent: Parent;
  /** The parent's trace id (ignored without a parent). */
  trace?: string;
  exported: boolean;
}

/** In for a 0.5 ratio: the words XOR to n (n < 0x10), far below 0x7fffffff. */
const low = (n: number) => `0000000${n.toString(16)}${'0'.repeat(16)}00000001`;
/** Out for a 0.5 ratio: the words XOR to 0xf000000n. */
const high = (n: number) => `0000000${n.toString(16)}${'0'.repeat(16)}f0000000`;
const PARENT_SPAN = '5a5a5a5a5a5a5a5a';

interface Received {
  text: string;
  traceparent: string | undefined;
}

/**
 * Runs `cases` (and `roots` requests without a parent) through a gateway with `traces`; what was exported and what the
 * upstream got.
 */
async function run(traces: Record<string, unknown>, cases: Case[], roots = 0) {
  const receiver = await startOtlpReceiver();
  const dir = tempDir('mcp-gateway-samplers-');
  const recordFile = path.join(dir, 'received.jsonl');
  const gateway = await startTestGateway(
    { rec: recordingServer(recordFile, { id: 'rec' }) },
    {},
    {
      telemetry: { traces: { endpoint: receiver.url, protocol: 'http/json', ...traces } },
      auth: { apiKeys: [{ key: KEY, principal: 'tester' }] },
    },
  );
  const echo = async (text: string, traceparent?: string) => {
    const body = request('tools/call', { name: 'echo', arguments: { text } });
    const extra = { authorization: `Bearer ${KEY}`, ...(traceparent ? { traceparent } : {}) };
    assert.equal((await send(`${gateway.url}/servers/rec/mcp`, body, extra)).status, 200, text);
  };
  try {
    for (const [i, c] of cases.entries()) {
      await echo(
        `case-${i}`,
        c.parent === 'none' ? undefined : `00-${c.trace}-${PARENT_SPAN}-${c.parent === 'sampled' ? '01' : '00'}`,
      );
    }
    for (let i = 0; i < roots; i++) await echo(`root-${i}`);
  } finally {
    // Closing exports what the batch processor still holds.
    await gateway.close();
    await receiver.close();
  }
  const received = new Map<string, Received>();
  for (const line of readFileSync(recordFile, 'utf8').trim().split('\n')) {
    const message = JSON.parse(line);
    if (message.method === 'tools/call')
      received.set(message.params.arguments.text, {
        text: message.params.arguments.text,
        traceparent: message.params._meta?.traceparent,
      });
  }
  const exportedTraces = new Set(receiver.spans.filter((span) => span.kind === SERVER).map((span) => span.traceId));
  return { received, exportedTraces };
}

/** The trace id and flags the upstream was handed. */
function handedOn(received: Received | undefined): { trace: string; sampled: boolean } {
  const match = /^00-([0-9a-f]{32})-[0-9a-f]{16}-(0[01])$/.exec(received?.traceparent ?? '');
  assert.ok(match, `a traceparent reached the upstream: ${JSON.stringify(received)}`);
  return { trace: match[1]!, sampled: match[2] === '01' };
}

async function check(traces: Record<string, unknown>, cases: Case[]): Promise<void> {
  const { received, exportedTraces } = await run(traces, cases);
  for (const [i, c] of cases.entries()) {
    const what = `${JSON.stringify(traces)}: ${c.parent} parent${c.trace ? ` ${c.trace}` : ''}`;
    const upstream = handedOn(received.get(`case-${i}`));
    if (c.parent !== 'none') assert.equal(upstream.trace, c.trace, `${what}: the trace goes on`);
    assert.equal(
      exportedTraces.has(upstream.trace),
      c.exported,
      `${what}: ${c.exported ? 'exported' : 'not exported'}`,
    );
    assert.equal(upstream.sampled, c.exported, `${what}: the upstream is told the same decision`);
  }
}

describe('tracing samplers, run', () => {
  it('parentbased_always_on (the default) follows the parent and samples roots', () =>
    check({}, [
      { parent: 'sampled', trace: low(1), exported: true },
      { parent: 'unsampled', trace: low(2), exported: false },
      { parent: 'none', exported: true },
    ]));

  it('parentbased_always_off follows the parent and drops roots', () =>
    check({ sampler: 'parentbased_always_off' }, [
      { parent: 'sampled', trace: high(1), exported: true },
      { parent: 'unsampled', trace: low(3), exported: false },
      { parent: 'none', exported: false },
    ]));

  it('always_on and always_off ignore the parent', async () => {
    await check({ sampler: 'always_on' }, [
      { parent: 'unsampled', trace: high(2), exported: true },
      { parent: 'none', exported: true },
    ]);
    await check({ sampler: 'always_off' }, [
      { parent: 'sampled', trace: low(4), exported: false },
      { parent: 'none', exported: false },
    ]);
  });

  it('traceidratio decides by the trace id alone, whatever the parent says', () =>
    check({ sampler: 'traceidratio', samplerRatio: 0.5 }, [
      { parent: 'sampled', trace: high(3), exported: false },
      { parent: 'unsampled', trace: low(5), exported: true },
      { parent: 'sampled', trace: low(6), exported: true },
      { parent: 'unsampled', trace: high(4), exported: false },
    ]));

  it('parentbased_traceidratio follows the parent, and samples part of the roots by their ids', async () => {
    const cases: Case[] = [
      { parent: 'sampled', trace: high(5), exported: true },
      { parent: 'unsampled', trace: low(7), exported: false },
    ];
    await check({ sampler: 'parentbased_traceidratio', samplerRatio: 0.5 }, cases);
    // Roots get random ids: with 40 of them at 0.5, all in or all out has a chance of 2 in 2^40.
    const roots = 40;
    const { received, exportedTraces } = await run(
      { sampler: 'parentbased_traceidratio', samplerRatio: 0.5 },
      [],
      roots,
    );
    let exported = 0;
    for (let i = 0; i < roots; i++) {
      const upstream = handedOn(received.get(`root-${i}`));
      assert.equal(
        exportedTraces.has(upstream.trace),
        upstream.sampled,
        `root ${i}: exported exactly when the upstream is told so`,
      );
      if (upstream.sampled) exported++;
    }
    assert.ok(exported > 0 && exported < roots, `some roots sampled, some not: ${exported} of ${roots}`);
  });
});
