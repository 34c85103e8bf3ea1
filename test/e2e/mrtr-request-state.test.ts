// Multi round-trip requests (MRTR) through the gateway (shared plumbing in mrtr-kit.ts): the gateway's own
// requestState on the legacy fixture: the round trip, and every altered, replayed, misdirected or incomplete
// retry refused with -32602; several rounds; sampling and roots; a question while another call is in flight.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, eventually, send, textOf } from './harness.js';
import { recordingLog } from '../recording-log.js';
import {
  startGw,
  freshId,
  call,
  retry,
  inputRequired,
  complete,
  invalidState,
  stateBody,
  sdkClient,
  stream,
  ALICE,
  BOB,
  as,
  ROOTS,
} from './mrtr-kit.js';

// ---- 3, 4, 5, 7. the gateway's own requestState, on the legacy fixture -----------------------------------

describe("legacy fixture: the gateway's requestState", () => {
  let gw: RunningGateway;
  let url: string;
  const recording = recordingLog();
  before(async () => {
    gw = await startGw(
      { legacy: fixture('legacy-server'), rooted: fixture('legacy-server', { roots: ROOTS }) },
      {
        auth: {
          apiKeys: [
            { key: ALICE, principal: 'alice' },
            { key: BOB, principal: 'bob' },
          ],
        },
        audit: { destination: '/dev/null' },
      },
      recording,
    );
    url = `${gw.url}/servers/legacy/mcp`;
  });
  after(() => gw.close());

  /** alice's `ask`, first round. */
  async function ask(question = 'Name?') {
    const first = call('ask', { question }, { elicitation: {} });
    const asked = inputRequired(await send(url, first, as(ALICE)));
    assert.deepEqual(Object.keys(asked.inputRequests), ['elicitation-1']);
    assert.equal(asked.inputRequests['elicitation-1']!.params.message, question);
    return { first, asked, state: asked.requestState };
  }
  const answerOf = (name: string) => ({ 'elicitation-1': { action: 'accept', content: { name } } });
  const finish = async (first: ReturnType<typeof call>, state: string, name = 'Ada') => {
    const result = complete(await send(url, retry(first, state, answerOf(name)), as(ALICE)));
    assert.deepEqual(JSON.parse(textOf(result)), { action: 'accept', content: { name } });
  };

  test('the round trip: the answer reaches the server, the call completes', async () => {
    const { first, state } = await ask();
    assert.ok(state.startsWith('mcpgw1.'));
    await finish(first, state);
  });

  test('one character changed → -32602 (altered); the genuine retry still completes', async () => {
    const { first, state } = await ask();
    const i = Math.floor(state.length / 2);
    const tampered = state.slice(0, i) + (state[i] === 'A' ? 'B' : 'A') + state.slice(i + 1);
    invalidState(await send(url, retry(first, tampered, answerOf('Mallory')), as(ALICE)), /altered/);
    await finish(first, state);
  });

  test(
    'body re-encoded with a changed field (round, expiry, ' + 'caller) under the old MAC → -32602 (altered)',
    async () => {
      const { first, state } = await ask();
      const mac = state.slice(state.lastIndexOf('.') + 1);
      const body = stateBody(state);
      for (const change of [
        { round: body.round + 1 },
        { expiresAt: body.expiresAt + 3_600_000 },
        { caller: 'principal-bob' },
      ]) {
        const forged = `mcpgw1.${Buffer.from(JSON.stringify({ ...body, ...change })).toString('base64url')}.${mac}`;
        invalidState(await send(url, retry(first, forged, answerOf('Mallory')), as(ALICE)), /altered/);
      }
      await finish(first, state);
    },
  );

  test('replayed by another principal → -32602 (another caller); its owner still completes it', async () => {
    const { first, state } = await ask();
    invalidState(await send(url, retry(first, state, answerOf('Bob')), as(BOB)), /another caller/);
    await finish(first, state, 'Alice');
  });

  test('replayed after it was answered → -32602', async () => {
    const { first, state } = await ask();
    await finish(first, state);
    invalidState(await send(url, retry(first, state, answerOf('Again')), as(ALICE)), /no longer held|already answered/);
  });

  test('the retry changes the params → -32602 (different request)', async () => {
    const { first, state } = await ask('Name?');
    const changed = retry(first, state, answerOf('Ada'), { arguments: { question: 'Password?' } });
    invalidState(await send(url, changed, as(ALICE)), /different request/);
    const otherTool = retry(first, state, answerOf('Ada'), { name: 'ask-twice' });
    invalidState(await send(url, otherTool, as(ALICE)), /different request/);
    await finish(first, state);
  });

  test(
    'inputResponses without the key asked for → -32602 naming the key; inputResponses without requestState → ' +
      '-32602',
    async () => {
      const { first, state } = await ask();
      invalidState(await send(url, retry(first, state, {}), as(ALICE)), /no answer under "elicitation-1"/);
      invalidState(
        await send(
          url,
          retry(first, state, { 'elicitation-2': { action: 'accept', content: { name: 'x' } } }),
          as(ALICE),
        ),
        /no answer under "elicitation-1"/,
      );
      const noState = { ...first, id: freshId(), params: { ...first.params, inputResponses: answerOf('Ada') } };
      const answer = await send(url, noState, as(ALICE));
      assert.equal(answer.body?.error?.code, -32602, JSON.stringify(answer.body));
      assert.match(answer.body.error.message, /requestState/);
      await finish(first, state);
    },
  );

  test('a requestState the gateway did not issue → -32602 (not issued by this gateway)', async () => {
    const first = call('ask', {}, { elicitation: {} });
    invalidState(
      await send(url, retry(first, 'opaque-state-from-somewhere', answerOf('x')), as(ALICE)),
      /not issued by this gateway/,
    );
  });

  test(
    "a requestState is good only on the server that issued it: the same retry at another server's endpoint → " +
      '-32602',
    async () => {
      // `rooted` runs the same fixture, so the retry's method and params are identical there.
      const { first, state } = await ask();
      const elsewhere = await send(
        `${gw.url}/servers/rooted/mcp`,
        retry(first, state, answerOf('Elsewhere')),
        as(ALICE),
      );
      assert.equal(
        elsewhere.body?.error?.code,
        -32602,
        `answered through rooted by legacy's call: ${JSON.stringify(elsewhere.body)}`,
      );
      await finish(first, state);
    },
  );

  // ---- 4. two rounds
  test('two rounds in one call: a new key and requestState each round; the answer carries both inputs', async () => {
    const first = call('ask-twice', { topic: 'cats' }, { elicitation: {} });
    const one = inputRequired(await send(url, first, as(ALICE)));
    assert.deepEqual(Object.keys(one.inputRequests), ['elicitation-1']);
    assert.equal(one.inputRequests['elicitation-1']!.params.message, 'First question about cats');
    const two = inputRequired(
      await send(
        url,
        retry(first, one.requestState, { 'elicitation-1': { action: 'accept', content: { value: 'one' } } }),
        as(ALICE),
      ),
    );
    assert.deepEqual(Object.keys(two.inputRequests), ['elicitation-2']);
    assert.equal(two.inputRequests['elicitation-2']!.params.message, 'Second question, after {"value":"one"}');
    assert.notEqual(two.requestState, one.requestState);
    // The first round's requestState is spent; the second round wants its own key.
    invalidState(
      await send(
        url,
        retry(first, one.requestState, { 'elicitation-1': { action: 'accept', content: { value: 'again' } } }),
        as(ALICE),
      ),
      /already answered/,
    );
    invalidState(
      await send(
        url,
        retry(first, two.requestState, { 'elicitation-1': { action: 'accept', content: { value: 'two' } } }),
        as(ALICE),
      ),
      /no answer under "elicitation-2"/,
    );
    const result = complete(
      await send(
        url,
        retry(first, two.requestState, { 'elicitation-2': { action: 'accept', content: { value: 'two' } } }),
        as(ALICE),
      ),
    );
    assert.deepEqual(JSON.parse(textOf(result)), {
      first: { action: 'accept', content: { value: 'one' } },
      second: { action: 'accept', content: { value: 'two' } },
    });
  });

  test('two rounds with the SDK v2 client through /mcp', async () => {
    const asked: string[] = [];
    const client = await sdkClient(
      `${gw.url}/mcp`,
      {
        elicit: (params) => (asked.push(params.message), { action: 'accept', content: { value: `#${asked.length}` } }),
      },
      (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...as(ALICE) },
        }),
    );
    try {
      const result = await client.callTool({ name: 'legacy__ask-twice', arguments: { topic: 'dogs' } });
      assert.deepEqual(asked, ['First question about dogs', 'Second question, after {"value":"#1"}']);
      assert.deepEqual(JSON.parse(textOf(result)), {
        first: { action: 'accept', content: { value: '#1' } },
        second: { action: 'accept', content: { value: '#2' } },
      });
    } finally {
      await client.close();
    }
  });

  test('sampling and roots on the legacy fixture: raw round trips with the keys the brief names', async () => {
    const sample = call('ask-sample', { prompt: 'hi' }, { sampling: {} });
    const s = inputRequired(await send(url, sample, as(ALICE)));
    assert.deepEqual(Object.keys(s.inputRequests), ['sampling-1']);
    assert.equal(s.inputRequests['sampling-1']!.method, 'sampling/createMessage');
    const sampled = { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm' };
    assert.deepEqual(
      JSON.parse(
        textOf(complete(await send(url, retry(sample, s.requestState, { 'sampling-1': sampled }), as(ALICE)))),
      ),
      sampled,
    );

    const roots = call('ask-roots', {}, { roots: {} });
    const r = inputRequired(await send(url, roots, as(ALICE)));
    assert.deepEqual(r.inputRequests, { 'roots-1': { method: 'roots/list', params: {} } });
    const listed = { roots: [{ uri: 'file:///home/alice', name: 'home' }] };
    assert.deepEqual(
      JSON.parse(textOf(complete(await send(url, retry(roots, r.requestState, { 'roots-1': listed }), as(ALICE))))),
      listed,
    );
  });

  // ---- 5. roots from config
  test('roots: from the config answer roots/list without asking the client (no capability needed)', async () => {
    const result = complete(await send(`${gw.url}/servers/rooted/mcp`, call('ask-roots'), as(ALICE)));
    assert.deepEqual(JSON.parse(textOf(result)), { roots: ROOTS });
    const viaMcp = complete(await send(`${gw.url}/mcp`, call('rooted__ask-roots', {}, { roots: {} }), as(ALICE)));
    assert.deepEqual(JSON.parse(textOf(viaMcp)), { roots: ROOTS });
  });

  // ---- 7. several calls on one stdio child
  test(
    'a question while another call is in flight on the same child is refused, ' + 'not shown to either caller',
    async () => {
      const hold = call('hold', { ms: 30_000 }, { elicitation: {} });
      (hold.params._meta as Record<string, unknown>).progressToken = 'hold-1';
      const held = await stream(url, hold, as(BOB));
      await eventually(() => held.messages.some((m) => m.method === 'notifications/progress'), 15_000);
      // alice's `ask` runs while bob's `hold` is in flight: stdio cannot say whose question it is.
      const answer = await send(url, call('ask', { question: 'Whose question?' }, { elicitation: {} }), as(ALICE));
      const result = complete(answer);
      assert.match(textOf(result), /^elicitation failed: .*2 calls are in flight/);
      complete(await send(url, call('release'), as(ALICE)));
      const messages = await held.done;
      const last = messages.at(-1);
      assert.equal(last.result?.resultType === 'input_required', false);
      assert.equal(textOf(last.result), 'released');
      assert.ok(
        messages.every((m) => !JSON.stringify(m).includes('Whose question?')),
        "bob never saw alice's question",
      );
      assert.ok(
        recording.lines.some(
          (r) =>
            r.msg === 'refused a request from the upstream' &&
            r.obj.method === 'elicitation/create' &&
            /2 calls are in flight/.test(String(r.obj.why)),
        ),
      );
    },
  );

  test(
    "a call held for its client's answer and a second asker: the second waits behind it (mrtr.queueMs), the " +
      'first completes with its own answer, then the second is asked its own question',
    async () => {
      const { first, state } = await ask('Alice, your name?');
      const bobs = send(url, call('ask', { question: 'Bob, your name?' }, { elicitation: {} }), as(BOB));
      await finish(first, state, 'Alice');
      assert.match(JSON.stringify(inputRequired(await bobs).inputRequests), /Bob, your name\?/);
    },
  );
});
