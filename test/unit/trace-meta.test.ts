// The trace context lent into a stdio request's _meta while it is serialised: the serialised line names the
// call's span, and the caller's _meta comes back exactly as it was (same keys, same order, same values).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lendTraceMeta, restoreTraceMeta } from '../../bridge/trace-meta.js';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const VERSION = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };

function roundTrip(meta: Record<string, any>, trace: { traceparent: string; tracestate: string | undefined }) {
  const before = JSON.stringify(meta);
  const keys = Object.keys(meta);
  const lent = lendTraceMeta(meta, trace);
  const sent = JSON.parse(JSON.stringify(meta));
  restoreTraceMeta(meta, lent);
  assert.equal(JSON.stringify(meta), before);
  assert.deepEqual(Object.keys(meta), keys, 'no key left behind, none lost');
  return sent;
}

describe('lending the trace context into _meta', () => {
  it('adds traceparent and tracestate to a _meta without them, then takes them out', () => {
    const sent = roundTrip({ ...VERSION }, { traceparent: PARENT, tracestate: 'vendor=1' });
    assert.deepEqual(sent, { ...VERSION, traceparent: PARENT, tracestate: 'vendor=1' });
  });

  it("replaces the caller's own context while sending, and gives it back", () => {
    const meta = { ...VERSION, traceparent: 'theirs', tracestate: 'their=state', progressToken: 7 };
    const sent = roundTrip(meta, { traceparent: PARENT, tracestate: undefined });
    assert.equal(sent.traceparent, PARENT);
    assert.equal('tracestate' in sent, false, "the caller's tracestate never travels with another parent");
    assert.equal(meta.traceparent, 'theirs');
    assert.equal(meta.tracestate, 'their=state');
  });

  it('sends no tracestate when neither the context nor the caller has one', () => {
    const sent = roundTrip({ ...VERSION }, { traceparent: PARENT, tracestate: undefined });
    assert.deepEqual(sent, { ...VERSION, traceparent: PARENT });
  });
});
