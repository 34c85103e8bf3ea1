// Multi round-trip requests (MRTR) through the gateway (shared plumbing in mrtr-kit.ts): the retry resumes
// the held call on the replica holding it when the gateways share Redis, and is refused, naming the holder or
// saying why, when they cannot help.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FetchLike } from '@modelcontextprotocol/client';
import { Redis } from 'ioredis';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, eventually, textOf, send } from './harness.js';
import { sharedRedis } from '../services.js';
import { SHARED_REDIS, twoReplicas } from './replicas.js';
import { startGw, call, retry, inputRequired, complete, invalidState, stateBody, sdkClient } from './mrtr-kit.js';

// ---- 6. replicas --------------------------------------------------------------------------------------------

const needRedis = await sharedRedis('MRTR across replicas on the shared Redis');

describe('two gateways on one Redis: a retry sent to the other replica is forwarded to the holder', {
  skip: needRedis.skip,
}, () => {
  before(needRedis.check);
  const replicas = twoReplicas('mrtr-e2e', (rest) => startGw({ legacy: fixture('legacy-server') }, rest));

  test('first round on A, retry on B: completed', async () => {
    const { a, b } = replicas;
    const first = call('ask', { question: 'Replica?' }, { elicitation: {} });
    const asked = inputRequired(await send(`${a.url}/servers/legacy/mcp`, first));
    const result = complete(
      await send(
        `${b.url}/servers/legacy/mcp`,
        retry(first, asked.requestState, { 'elicitation-1': { action: 'accept', content: { name: 'from B' } } }),
      ),
    );
    assert.deepEqual(JSON.parse(textOf(result)), { action: 'accept', content: { name: 'from B' } });
  });

  test('two rounds alternating replicas through /mcp; and a spent requestState sent to B is refused by A', async () => {
    const { a, b } = replicas;
    const first = call('legacy__ask-twice', { topic: 'replicas' }, { elicitation: {} });
    const one = inputRequired(await send(`${a.url}/mcp`, first));
    const two = inputRequired(
      await send(
        `${b.url}/mcp`,
        retry(first, one.requestState, { 'elicitation-1': { action: 'accept', content: { value: 'b' } } }),
      ),
    );
    assert.deepEqual(Object.keys(two.inputRequests), ['elicitation-2']);
    invalidState(
      await send(
        `${b.url}/mcp`,
        retry(first, one.requestState, { 'elicitation-1': { action: 'accept', content: { value: 'x' } } }),
      ),
      /already answered/,
    );
    const result = complete(
      await send(
        `${b.url}/mcp`,
        retry(first, two.requestState, { 'elicitation-2': { action: 'accept', content: { value: 'b2' } } }),
      ),
    );
    assert.deepEqual(JSON.parse(textOf(result)), {
      first: { action: 'accept', content: { value: 'b' } },
      second: { action: 'accept', content: { value: 'b2' } },
    });
  });

  test('the SDK v2 client behind a "load balancer" that sends every retry to the other replica', async () => {
    const { a, b } = replicas;
    const seen: string[] = [];
    const balance: FetchLike = (input, init) => {
      const body = typeof init?.body === 'string' ? init.body : '';
      const target = body.includes('"requestState"') ? b.url : a.url;
      seen.push(target === a.url ? 'A' : 'B');
      return fetch(String(input).replace(a.url, target), init);
    };
    const client = await sdkClient(
      `${a.url}/servers/legacy/mcp`,
      { elicit: () => ({ action: 'accept', content: { name: 'balanced' } }) },
      balance,
    );
    try {
      const result = await client.callTool({ name: 'ask', arguments: {} });
      assert.deepEqual(JSON.parse(textOf(result)), { action: 'accept', content: { name: 'balanced' } });
      assert.ok(seen.includes('B'), 'the retry went to B');
    } finally {
      await client.close();
    }
  });
});

describe('replicas on one Redis that cannot help', { skip: needRedis.skip }, () => {
  before(needRedis.check);
  test(
    'the holder has stopped, or the replica has another mrtr.secret: ' + 'the retry is refused with -32602 (no hang)',
    async () => {
      const keyPrefix = `mrtr-e2e-${randomUUID()}:`;
      const cache = { store: 'redis', url: SHARED_REDIS, keyPrefix };
      const secret = 'a shared mrtr secret, 32+ chars long';
      const [b, holder, stranger] = await Promise.all([
        startGw({ legacy: fixture('legacy-server') }, { cache, mrtr: { secret } }),
        startGw({ legacy: fixture('legacy-server') }, { cache, mrtr: { secret } }),
        startGw({ legacy: fixture('legacy-server') }, { cache, mrtr: { secret: 'another secret, also 32+ chars' } }),
      ]);
      const redis = new Redis(SHARED_REDIS);
      let holderClosed = false;
      try {
        await eventually(async () => (await redis.keys(`${keyPrefix}instance:*`)).length === 3, 10_000);
        const responses = { 'elicitation-1': { action: 'accept', content: { name: 'x' } } };

        const first = call('ask', {}, { elicitation: {} });
        const fromStranger = inputRequired(await send(`${stranger.url}/servers/legacy/mcp`, first));
        invalidState(
          await send(`${b.url}/servers/legacy/mcp`, retry(first, fromStranger.requestState, responses)),
          /mrtr\.secret/,
        );

        const second = call('ask', {}, { elicitation: {} });
        const fromHolder = inputRequired(await send(`${holder.url}/servers/legacy/mcp`, second));
        await holder.close();
        holderClosed = true;
        const refused = await send(`${b.url}/servers/legacy/mcp`, retry(second, fromHolder.requestState, responses));
        invalidState(refused, /held by gateway instance/);
        assert.ok(refused.body.error.message.includes(stateBody(fromHolder.requestState).instance));
      } finally {
        await Promise.all([b.close(), stranger.close(), holderClosed ? undefined : holder.close()]);
        const keys = await redis.keys(`${keyPrefix}*`);
        if (keys.length) await redis.del(...keys);
        redis.disconnect();
      }
    },
  );
});

describe('two gateways without Redis: a retry at the wrong replica is refused, naming the holder', () => {
  let a: RunningGateway;
  let b: RunningGateway;
  before(async () => {
    const rest = { mrtr: { secret: 'a shared mrtr secret, 32+ chars long' } };
    [a, b] = await Promise.all([
      startGw({ legacy: fixture('legacy-server') }, rest),
      startGw({ legacy: fixture('legacy-server') }, rest),
    ]);
  });
  after(() => Promise.all([a.close(), b.close()]));

  test("retry at B → -32602 naming A's instance; the same retry at A completes", async () => {
    const first = call('ask', {}, { elicitation: {} });
    const asked = inputRequired(await send(`${a.url}/servers/legacy/mcp`, first));
    const holder = stateBody(asked.requestState).instance as string;
    const responses = { 'elicitation-1': { action: 'accept', content: { name: 'A' } } };
    const refused = await send(`${b.url}/servers/legacy/mcp`, retry(first, asked.requestState, responses));
    invalidState(refused, /held by gateway instance/);
    assert.ok(refused.body.error.message.includes(holder), refused.body.error.message);
    assert.deepEqual(
      JSON.parse(
        textOf(complete(await send(`${a.url}/servers/legacy/mcp`, retry(first, asked.requestState, responses)))),
      ),
      {
        action: 'accept',
        content: { name: 'A' },
      },
    );
  });
});
