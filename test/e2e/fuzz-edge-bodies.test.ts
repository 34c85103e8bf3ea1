// Property-based fuzzing (fast-check) of the HTTP edge with arbitrary bodies (random bytes, random JSON,
// JSON-RPC-shaped objects with wrong types, odd ids and nested _meta, huge strings, batches) under arbitrary
// headers, methods and paths. Properties: the gateway process never dies and serves a normal call after
// every batch; every answer is a 2xx carrying a valid JSON-RPC message for that request, or a 4xx carrying a
// JSON-RPC error, never a 5xx; nothing stays in flight; and its heap returns to its baseline after a forced GC.
// The gateway runs as a child process with one modern upstream (fuzz-edge-kit.ts); to replay a failure,
// FC_SEED=<seed> FC_PATH=<path> (both in the report; see test/fuzz-seed.ts) replays that input in every
// property; FUZZ_DUMP=<file> writes a failing body in full; FUZZ_SCALE=<n> multiplies every property's runs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { assertProperty } from '../fuzz-seed.js';
import { sseTextMessages } from '../sse.js';
import { META } from './harness.js';
import {
  assertIdle,
  assertServing,
  Body,
  describeSent,
  gatewayForThisFile,
  problemWith,
  REPLAY,
  SCALE,
  send,
  sentSoFar,
  utf8,
  exchange,
} from './fuzz-edge-kit.js';
import { batchText, build, envelopeArb, hugeText, rpcText } from './fuzz-edge-arbitraries.js';
import type { ChildGateway } from './child-gateway.js';

const target = gatewayForThisFile();

const BODIES = {
  'random bytes': fc.uint8Array({ maxLength: 2048 }).map((bytes) => new Body(Buffer.from(bytes))),
  'random JSON': utf8(fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v) ?? 'null')),
  'JSON-RPC-shaped objects with wrong types, odd ids and nested _meta': utf8(rpcText),
  batches: utf8(batchText),
  'huge strings': utf8(hugeText),
};
const RUNS: Record<keyof typeof BODIES, number> = {
  'random bytes': 150,
  'random JSON': 150,
  'JSON-RPC-shaped objects with wrong types, odd ids and nested _meta': 500,
  batches: 100,
  'huge strings': 40,
};

function property(target: () => ChildGateway, bodies: fc.Arbitrary<Body>) {
  return fc.asyncProperty(envelopeArb, bodies, async (envelope, body) =>
    exchange(target(), build(envelope, body.bytes)),
  );
}

describe('the HTTP edge under arbitrary input', () => {
  for (const [name, bodies] of Object.entries(BODIES) as [keyof typeof BODIES, fc.Arbitrary<Body>][]) {
    test(`${name}: never a 5xx, always a JSON-RPC answer or refusal; the gateway keeps serving`, async () => {
      await assertProperty(property(target.current, bodies), { numRuns: RUNS[name] * SCALE, ...REPLAY });
      await assertIdle(target.current());
      await assertServing(target.current());
      await assertIdle(target.current());
    });
  }

  test("well-formed calls with every header variant: answers carry the caller's id and payload", async () => {
    // The mutations above mostly end in refusals; here every body is a valid echo call and only the
    // headers vary, so many reach the upstream and the answer can be checked against the request.
    const call = fc.record({
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 30 })),
      text: fc.string({ maxLength: 100 }),
      progress: fc.boolean(),
      onServer: fc.boolean(),
    });
    await assertProperty(
      fc.asyncProperty(envelopeArb, call, async (envelope, c) => {
        const name = c.onServer ? 'echo' : 'r__echo';
        const body = {
          jsonrpc: '2.0',
          id: c.id,
          method: 'tools/call',
          params: { name, arguments: { text: c.text }, _meta: c.progress ? { ...META, progressToken: 'p' } : META },
        };
        const sent = build(
          { ...envelope, method: 'POST', path: c.onServer ? '/servers/r/mcp' : '/mcp' },
          Buffer.from(JSON.stringify(body)),
        );
        sentSoFar.exchanges++;
        const got = await send(target.current().base, sent, false);
        const problem = problemWith(sent, got);
        if (problem) throw new Error(`${problem}\non ${describeSent(sent)}`);
        if (got.status === 200) {
          const last = String(got.headers['content-type']).startsWith('text/event-stream')
            ? sseTextMessages(got.text).at(-1)
            : JSON.parse(got.text);
          const answer = last as { id: unknown; result?: { content: { text: string }[] } };
          assert.deepEqual(answer.id, c.id);
          assert.deepEqual(JSON.parse(answer.result!.content[0]!.text), { text: c.text });
        }
      }),
      { numRuns: 300 * SCALE, ...REPLAY },
    );
    await assertIdle(target.current());
    await assertServing(target.current());
  });

  test('memory returns to its baseline: the heap after a forced GC, after rounds of every property', async (t) => {
    const rounds = 3;
    const runs = 80;
    const round = async (): Promise<void> => {
      for (const bodies of Object.values(BODIES))
        await assertProperty(property(target.current, bodies), { numRuns: runs, ...REPLAY });
    };
    await round(); // warms every path (lazily compiled code, pools, caches that fill once)
    await assertIdle(target.current());
    const baseline = await target.current().memory();
    const before = sentSoFar.exchanges;
    for (let i = 0; i < rounds; i++) await round();
    await assertIdle(target.current());
    const afterRounds = await target.current().memory();
    // Bound: the heap in use after a full GC may exceed the baseline by at most 25% + 8 MB (bounded caches fill
    // meanwhile) (about 6 MB on a
    // ~19 MB heap). Over the ~1,200 requests of these rounds, retaining 5 KB per request, or one of the
    // huge bodies (64 KB to 1 MB) every few dozen requests, would exceed it.
    const bound = baseline.heapUsed * 1.25 + 8 * 1024 * 1024;
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    t.diagnostic(
      `heapUsed ${mb(baseline.heapUsed)} → ${mb(afterRounds.heapUsed)} (bound ${mb(bound)}), rss ` +
        `${mb(baseline.rss)} → ${mb(afterRounds.rss)}, over ${sentSoFar.exchanges - before} requests`,
    );
    assert.ok(
      afterRounds.heapUsed <= bound,
      `heapUsed ${mb(afterRounds.heapUsed)} after ${sentSoFar.exchanges - before} more requests, baseline ` +
        `${mb(baseline.heapUsed)}, bound ${mb(bound)}`,
    );
    // RSS is the OS's view; it need not shrink after a GC, but must not run away either.
    assert.ok(
      afterRounds.rss <= baseline.rss * 1.5 + 64 * 1024 * 1024,
      `rss ${mb(afterRounds.rss)} vs baseline ${mb(baseline.rss)}`,
    );
    await assertServing(target.current());
  });
});
