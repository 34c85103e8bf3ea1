// Search mode across replicas (#18): call_tool is a direct call in other clothes, so an MRTR retry of
// call_tool that a load balancer sends to another replica resumes the call there: a 2025 server's call,
// which the first replica holds, is forwarded to it; a modern server's requestState is the server's own.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { eventually, fixture, request, ROOT, send, startTestGateway } from './harness.js';
import { sharedRedis } from '../services.js';
import { twoReplicas } from './replicas.js';
import { compiledFixture } from '../compiled-fixtures.js';

const mrtr = {
  command: process.execPath,
  args: [compiledFixture('mrtr-server')],
  cwd: ROOT,
  probeTimeoutMs: 30_000,
};
const needRedis = await sharedRedis('search mode across replicas on the shared Redis');
const CAPS = { _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } } };
const ACCEPT = { confirm: { action: 'accept', content: { ok: true } } };

const callTool = (name: string, args: Record<string, unknown>, extra: Record<string, unknown>, id: string) =>
  request('tools/call', { name: 'call_tool', arguments: { name, arguments: args }, ...extra }, id);

describe('call_tool on two replicas sharing Redis: a retry at the other replica resumes the held call', {
  skip: needRedis.skip,
}, () => {
  before(needRedis.check);
  const replicas = twoReplicas('search-replicas', (rest) =>
    startTestGateway({ mrtr, legacy: fixture('legacy-server') }, {}, rest),
  );
  before(async () => {
    // Every server up on both replicas first: a call while one still starts answers that it is starting.
    for (const replica of [replicas.a, replicas.b])
      await eventually(async () => (await fetch(`${replica.url}/readyz`)).status === 200, 60_000);
  });

  test(
    'a 2025 server’s call held by A, the retry of call_tool sent to B: ' + 'forwarded to A and completed; spent after',
    async () => {
      const { a, b } = replicas;
      const first = callTool('legacy__ask', { question: 'Which replica?' }, CAPS, 's1');
      const asked = await send(`${a.url}/search/mcp`, first);
      assert.equal(asked.status, 200, JSON.stringify(asked.body));
      const held = asked.body.result;
      assert.equal(held?.resultType, 'input_required', JSON.stringify(asked.body));
      assert.deepEqual(Object.keys(held.inputRequests), ['elicitation-1']);

      const answers = {
        requestState: held.requestState,
        inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'from B' } } },
      };
      const retry = callTool('legacy__ask', { question: 'Which replica?' }, { ...CAPS, ...answers }, 's2');
      const resumed = await send(`${b.url}/search/mcp`, retry);
      assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
      const result = resumed.body;
      assert.equal(result.id, 's2');
      assert.equal(result.result.resultType, 'complete', JSON.stringify(result));
      assert.deepEqual(JSON.parse(result.result.content[0].text), { action: 'accept', content: { name: 'from B' } });

      // The call finished: the same requestState again is refused as no longer held, via either replica.
      for (const replica of [a, b]) {
        const spent = (await send(`${replica.url}/search/mcp`, { ...retry, id: 's3' })).body;
        assert.equal(spent.error?.code, -32602, JSON.stringify(spent));
        assert.match(spent.error.message, /no longer held/);
      }
    },
  );

  test(
    'a modern server: a direct first round on A resumed through call_tool on B (the same call, whichever ' +
      'endpoint asks)',
    async () => {
      const { a, b } = replicas;
      const direct = request('tools/call', { name: 'mrtr__confirm', arguments: { env: 'dev' }, ...CAPS }, 'd1');
      const first = (await send(`${a.url}/mcp`, direct)).body;
      const asked = first.result;
      assert.equal(asked?.resultType, 'input_required', JSON.stringify(first));
      const resumed = await send(
        `${b.url}/search/mcp`,
        callTool(
          'mrtr__confirm',
          { env: 'dev' },
          { ...CAPS, requestState: asked.requestState, inputResponses: ACCEPT },
          'd2',
        ),
      );
      assert.match(
        resumed.body.result?.content?.[0]?.text ?? JSON.stringify(resumed.body),
        /^answer=\{"ok":true\} stateIntact=true$/,
      );
    },
  );
});
