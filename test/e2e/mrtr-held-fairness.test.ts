// Issue #35, item 3, attacked as the red team did: a caller leaves a 2025 stdio server's question
// unanswered (input_required, never retried). Before, every other caller's elicitation on that server
// failed for mrtr.holdMs ("2 calls are in flight and stdio does not say which one asks"); now the other
// caller waits behind the held call for mrtr.queueMs at most and is then asked its own question. And one
// caller may hold only mrtr.maxHeldPerCaller calls at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, request, startTestGateway, until, send } from './harness.js';

const A = 'a-held-key-0123456789abcdef';
const B = 'b-held-key-0123456789abcdef';
const QUEUE_MS = 1500;

let gateway: RunningGateway;

before(async () => {
  gateway = await startTestGateway(
    { l1: fixture('legacy-server'), l2: fixture('legacy-server'), l3: fixture('legacy-server') },
    {},
    {
      auth: {
        apiKeys: [
          { key: A, principal: 'a' },
          { key: B, principal: 'b' },
        ],
      },
      mrtr: { queueMs: QUEUE_MS, maxHeldPerCaller: 2 },
    },
  );
  assert.ok(await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 60_000), 'servers ready');
});

after(async () => {
  await gateway?.close();
});

function ask(server: string, key: string, question: string) {
  const body = request('tools/call', {
    name: 'ask',
    arguments: { question },
    _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
  });
  return send(`${gateway.url}/servers/${server}/mcp`, body, { authorization: `Bearer ${key}` }).then((answer) => ({
    body,
    answer,
  }));
}

describe('held calls on 2025 stdio servers', () => {
  test(
    'a caller holding mrtr.maxHeldPerCaller calls is refused a third, naming the setting; ' + 'another caller is not',
    async () => {
      for (const server of ['l1', 'l2']) {
        const { answer } = await ask(server, A, `held on ${server}`);
        assert.equal(answer.body.result?.resultType, 'input_required', JSON.stringify(answer.body).slice(0, 300));
      }
      const { answer: third } = await ask('l3', A, 'one too many');
      assert.ok(third.body.error, JSON.stringify(third.body).slice(0, 300));
      assert.match(third.body.error.message, /mrtr\.maxHeldPerCaller/);
      const { answer: other } = await ask('l3', B, 'another caller');
      assert.equal(other.body.result?.resultType, 'input_required', 'the limit is per caller');
    },
  );

  test(
    "another caller's question on a server with a held call is asked after at most mrtr.queueMs, " + 'not failed',
    async () => {
      // A's question on l1 is held and never answered (from the test above). B asks on l1 too.
      const { body: sent, answer } = await ask('l1', B, 'is anyone there?');
      assert.equal(answer.body.result?.resultType, 'input_required', JSON.stringify(answer.body).slice(0, 400));
      const [question] = Object.values(answer.body.result.inputRequests) as { params: { message: string } }[];
      assert.match(JSON.stringify(question), /is anyone there\?/, "B is shown its own question, not A's");
      // B answers its question and gets the server's answer.
      const key = Object.keys(answer.body.result.inputRequests)[0]!;
      const retry = {
        ...sent,
        id: 'retry-b',
        params: {
          ...sent.params,
          inputResponses: { [key]: { action: 'accept', content: { name: 'Bea' } } },
          requestState: answer.body.result.requestState,
        },
      };
      const done = await send(`${gateway.url}/servers/l1/mcp`, retry, { authorization: `Bearer ${B}` });
      assert.match(JSON.stringify(done.body.result?.content), /Bea/, JSON.stringify(done.body).slice(0, 300));
    },
  );
});
