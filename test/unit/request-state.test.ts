// The gateway's own requestState (held calls on 2025 servers): issued and opened, refused when altered, from
// another secret or not ours; and the digest that binds it to its request.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { requestDigest, RequestStateCodec, type HeldCallState } from '../../src/mrtr/request-state.js';

const KEY = Buffer.from('0123456789abcdef0123456789abcdef');
const codec = new RequestStateCodec(KEY, 'inst-A');
const state: HeldCallState = {
  instance: 'inst-A',
  upstream: 'legacy',
  call: 'c4ll-1d',
  round: 2,
  caller: 'principal:alice',
  request: requestDigest('tools/call', { name: 'ask', arguments: { q: 'x' } }),
  expiresAt: 1_900_000_000_000,
};

/** The token's three parts: prefix, body, mac. */
function parts(token: string): { body: string; mac: string } {
  assert.ok(token.startsWith('mcpgw1.'));
  const rest = token.slice('mcpgw1.'.length);
  const dot = rest.lastIndexOf('.');
  return { body: rest.slice(0, dot), mac: rest.slice(dot + 1) };
}

/** Changes one character of `s` at `i` to another character of the base64url alphabet. */
function flip(s: string, i: number): string {
  const c = s[i] === 'A' ? 'B' : 'A';
  return s.slice(0, i) + c + s.slice(i + 1);
}

describe('RequestStateCodec', () => {
  test('issue then open gives back the same state', () => {
    const token = codec.issue(state);
    assert.match(token, /^mcpgw1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    const opened = codec.open(token);
    assert.deepEqual(opened, { ok: true, state });
  });

  test('a replica with the same secret opens it; it still names the instance that issued it', () => {
    const replica = new RequestStateCodec(Buffer.from(KEY), 'inst-B');
    const opened = replica.open(codec.issue(state));
    assert.ok(opened.ok);
    assert.equal(opened.state.instance, 'inst-A');
  });

  test('one character of the body changed: refused as altered', () => {
    const token = codec.issue(state);
    const { body, mac } = parts(token);
    for (const i of [0, Math.floor(body.length / 2), body.length - 1]) {
      const opened = codec.open(`mcpgw1.${flip(body, i)}.${mac}`);
      assert.equal(opened.ok, false, `body changed at ${i}`);
      assert.match((opened as { why: string }).why, /altered/);
    }
  });

  test('the body re-encoded with a changed field (and the old MAC): refused as altered', () => {
    const { mac } = parts(codec.issue(state));
    for (const change of [
      { caller: 'principal:mallory' },
      { expiresAt: state.expiresAt + 1 },
      { instance: 'inst-B' },
      { round: 1 },
    ]) {
      const body = Buffer.from(JSON.stringify({ ...state, ...change })).toString('base64url');
      const opened = codec.open(`mcpgw1.${body}.${mac}`);
      assert.equal(opened.ok, false, JSON.stringify(change));
      assert.match((opened as { why: string }).why, /altered/);
    }
  });

  test('the MAC changed, truncated, lengthened or missing: refused', () => {
    const token = codec.issue(state);
    const { body, mac } = parts(token);
    for (const bad of [
      `mcpgw1.${body}.${flip(mac, 0)}`,
      `mcpgw1.${body}.${flip(mac, 42)}`,
      `mcpgw1.${body}.${mac.slice(0, 42)}`,
      `mcpgw1.${body}.${mac}A`,
      `mcpgw1.${body}.`,
      `mcpgw1.${body}`,
      'mcpgw1.',
      `mcpgw1..${mac}`,
    ]) {
      const opened = codec.open(bad);
      assert.equal(opened.ok, false, bad);
      assert.equal(typeof (opened as { why: string }).why, 'string');
    }
  });

  test('issued with another secret: refused, and the reason mentions mrtr.secret', () => {
    const other = new RequestStateCodec(Buffer.from('another secret, quite different!'), 'inst-A');
    const opened = codec.open(other.issue(state));
    assert.equal(opened.ok, false);
    assert.match((opened as { why: string }).why, /mrtr\.secret/);
  });

  test('not our prefix: refused as not issued by this gateway (whatever it holds)', () => {
    const token = codec.issue(state);
    for (const foreign of [
      '',
      'opaque-state',
      token.slice(1),
      `MCPGW1.${token.slice(7)}`,
      `mcpgw2.${token.slice(7)}`,
      ` ${token}`,
      '{"instance":"inst-A"}',
    ]) {
      const opened = codec.open(foreign);
      assert.equal(opened.ok, false, foreign);
      assert.match((opened as { why: string }).why, /not issued by this gateway/);
    }
  });

  test('a token with our prefix but non-ASCII characters where the MAC goes is refused, not thrown', () => {
    // 43 characters, but more than 43 bytes: a modern upstream's opaque state may well look like this.
    const lookalikes = [
      `mcpgw1.héllo.${'ä'.repeat(43)}`,
      `mcpgw1.abc.${'A'.repeat(42)}é`,
      `mcpgw1.x.${'🚀'.repeat(21)}A`,
    ];
    for (const token of lookalikes) {
      let opened: ReturnType<RequestStateCodec['open']> | undefined;
      assert.doesNotThrow(() => (opened = codec.open(token)), token);
      assert.equal(opened?.ok, false, token);
    }
  });

  test('a body that is not JSON under a valid MAC is refused as malformed', () => {
    // Only a holder of the key could make one; still, open must not throw on it.
    const body = Buffer.from('not json').toString('base64url');
    const mac = createHmac('sha256', KEY).update(body).digest('base64url');
    const opened = codec.open(`mcpgw1.${body}.${mac}`);
    assert.equal(opened.ok, false);
    assert.match((opened as { why: string }).why, /malformed/);
  });
});

describe('requestDigest', () => {
  const params = { name: 'ask', arguments: { question: 'Name?', n: 1, nested: { a: [1, 2], b: 'x' } } };
  const digest = requestDigest('tools/call', params);

  test('ignores _meta, inputResponses and requestState', () => {
    assert.equal(
      requestDigest('tools/call', {
        ...params,
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', progressToken: 7 },
        inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } },
        requestState: 'mcpgw1.x.y',
      }),
      digest,
    );
  });

  test('ignores key order, at every depth', () => {
    assert.equal(
      requestDigest('tools/call', {
        arguments: { nested: { b: 'x', a: [1, 2] }, n: 1, question: 'Name?' },
        name: 'ask',
      }),
      digest,
    );
  });

  test('does not ignore argument values, names, array order, added arguments or the method', () => {
    const different = [
      requestDigest('tools/call', { ...params, arguments: { ...params.arguments, question: 'Name!' } }),
      requestDigest('tools/call', { ...params, arguments: { ...params.arguments, n: 2 } }),
      requestDigest('tools/call', { ...params, arguments: { ...params.arguments, n: '1' } }),
      requestDigest('tools/call', { ...params, arguments: { ...params.arguments, nested: { a: [2, 1], b: 'x' } } }),
      requestDigest('tools/call', { ...params, arguments: { ...params.arguments, extra: true } }),
      requestDigest('tools/call', { ...params, name: 'ask-twice' }),
      requestDigest('prompts/get', params),
      requestDigest('tools/call', { name: 'ask' }),
    ];
    for (const [i, d] of different.entries()) assert.notEqual(d, digest, `variant ${i}`);
    assert.equal(new Set(different).size, different.length);
  });

  test('absent params and empty params digest alike; _meta alone does not change that', () => {
    assert.equal(requestDigest('resources/read', undefined), requestDigest('resources/read', {}));
    assert.equal(requestDigest('resources/read', { _meta: { a: 1 } }), requestDigest('resources/read', {}));
  });
});
