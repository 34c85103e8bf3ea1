// Multi round-trip requests (MRTR) through the gateway (shared plumbing in mrtr-kit.ts): a modern upstream's
// input_required and requestState pass through untouched, on /servers/<name>/mcp and /mcp, raw and through
// the SDK v2 client, uncached and unlogged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { send, textOf } from './harness.js';
import { recordingLog } from '../recording-log.js';
import {
  mrtrSdk,
  mrtrRaw,
  startGw,
  call,
  retry,
  inputRequired,
  complete,
  sha,
  withSdkClient,
  onBothEndpoints,
  ELICIT_OK,
} from './mrtr-kit.js';

// ---- 1. modern upstreams: passthrough ---------------------------------------------------------------------

describe('modern upstreams: input_required and requestState pass through untouched', () => {
  let gw: RunningGateway;
  const recording = recordingLog();
  before(async () => {
    gw = await startGw({ sdk: mrtrSdk, raw: mrtrRaw() }, {}, recording);
  });
  after(() => gw.close());

  test('SDK v2 server asking through MRTR, SDK v2 client: round trip through /servers/sdk/mcp and /mcp', async () => {
    for (const [endpoint, name] of onBothEndpoints('sdk', 'confirm')) {
      const asked: any[] = [];
      await withSdkClient(
        `${gw.url}${endpoint}`,
        { elicit: (params) => (asked.push(params), ELICIT_OK) },
        async (client) => {
          const result = await client.callTool({ name, arguments: { env: 'prod' } });
          assert.equal(textOf(result), 'answer={"ok":true} stateIntact=true', endpoint);
          assert.equal(asked.length, 1, endpoint);
          assert.equal(asked[0].message, 'Deploy to prod?');
        },
      );
    }
  });

  test('SDK v2 client: prompts/get through MRTR on both endpoints', async () => {
    for (const [endpoint, name] of onBothEndpoints('sdk', 'ask-name')) {
      await withSdkClient(
        `${gw.url}${endpoint}`,
        { elicit: () => ({ action: 'accept', content: { name: 'Ada' } }) },
        async (client) => {
          const prompt = await client.getPrompt({ name });
          assert.deepEqual(prompt.messages[0]!.content, { type: 'text', text: 'Hello, Ada! (prompt-state)' }, endpoint);
        },
      );
    }
  });

  test(
    'raw: inputRequests keys and params, and every requestState (64 KiB text, JSON look-alikes, our own prefix) ' +
      'come back to the upstream identical',
    async () => {
      const question = (mode: string) => ({
        'user answer': {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: `mode ${mode}?`,
            requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
          },
        },
      });
      for (const [endpoint, name] of [
        ['/servers/raw/mcp', 'state'],
        ['/mcp', 'raw__state'],
      ] as const) {
        for (const mode of ['big', 'json', 'gateway', 'plain']) {
          const first = call(name, { mode }, { elicitation: {} });
          const asked = inputRequired(await send(`${gw.url}${endpoint}`, first));
          assert.deepEqual(asked.inputRequests, question(mode), `${endpoint} ${mode}`);
          const responses = { 'user answer': { action: 'accept', content: { ok: true } } };
          const verdict = JSON.parse(
            textOf(complete(await send(`${gw.url}${endpoint}`, retry(first, asked.requestState, responses)))),
          );
          assert.equal(verdict.identical, true, `${endpoint} ${mode}: ${JSON.stringify(verdict)}`);
          assert.equal(
            verdict.sentSha256,
            sha(asked.requestState),
            `${endpoint} ${mode}: the client got what the upstream sent`,
          );
          assert.deepEqual(verdict.inputResponses, responses, `${endpoint} ${mode}: inputResponses arrive as sent`);
          if (mode === 'big') {
            assert.ok(Buffer.byteLength(asked.requestState) >= 64 * 1024);
            assert.ok(
              /[\u2028\u2029]/.test(asked.requestState) &&
                asked.requestState.includes('🚀') &&
                asked.requestState.includes('"') &&
                asked.requestState.includes('\\'),
            );
          }
          if (mode === 'json') assert.doesNotThrow(() => JSON.parse(asked.requestState));
          if (mode === 'gateway') assert.ok(asked.requestState.startsWith('mcpgw1.'));
        }
      }
    },
  );

  test('raw: prompts/get and resources/read round trips pass through too, on both endpoints', async () => {
    for (const endpoint of ['/servers/raw/mcp', '/mcp']) {
      const prompt = call(
        endpoint === '/mcp' ? 'raw__state' : 'state',
        { mode: 'json' },
        { elicitation: {} },
        'prompts/get',
      );
      const askedP = inputRequired(await send(`${gw.url}${endpoint}`, prompt), 'prompts/get');
      const resultP = complete(
        await send(`${gw.url}${endpoint}`, retry(prompt, askedP.requestState, { 'user answer': ELICIT_OK })),
        'prompts/get',
      );
      assert.equal(JSON.parse(resultP.messages[0].content.text).identical, true, endpoint);

      const read = call('raw://state/big', {}, { elicitation: {} }, 'resources/read');
      const askedR = inputRequired(await send(`${gw.url}${endpoint}`, read), 'resources/read');
      const resultR = complete(
        await send(`${gw.url}${endpoint}`, retry(read, askedR.requestState, { 'user answer': ELICIT_OK })),
        'resources/read',
      );
      assert.equal(JSON.parse(resultR.contents[0].text).identical, true, endpoint);
    }
  });

  test('SDK v2 client completes a round trip whose requestState is 64 KiB of arbitrary text', async () => {
    await withSdkClient(`${gw.url}/servers/raw/mcp`, { elicit: () => ELICIT_OK }, async (client) => {
      const verdict = JSON.parse(textOf(await client.callTool({ name: 'state', arguments: { mode: 'big' } })));
      assert.equal(verdict.identical, true);
      assert.ok(verdict.gotChars > 40_000);
    });
  });

  test(
    'nothing is cached: identical first rounds (tools/call and the cacheable resources/read) each reach the ' +
      'upstream',
    async () => {
      const url = `${gw.url}/servers/raw/mcp`;
      const count = async () => Number(textOf(complete(await send(url, call('first-rounds')))));
      const before = await count();
      for (let i = 0; i < 2; i++) {
        inputRequired(await send(url, call('state', { mode: 'plain' }, { elicitation: {} })));
        inputRequired(
          await send(url, call('raw://state/plain', {}, { elicitation: {} }, 'resources/read')),
          'resources/read',
        );
        inputRequired(
          await send(`${gw.url}/mcp`, call('raw://state/plain', {}, { elicitation: {} }, 'resources/read')),
          'resources/read',
        );
      }
      // A completed retry of resources/read (ttlMs 60000 on the complete answer) is not served to a later first round
      // either.
      const read = call('raw://state/plain', {}, { elicitation: {} }, 'resources/read');
      const asked = inputRequired(await send(url, read), 'resources/read');
      complete(await send(url, retry(read, asked.requestState, { 'user answer': ELICIT_OK })), 'resources/read');
      inputRequired(
        await send(url, call('raw://state/plain', {}, { elicitation: {} }, 'resources/read')),
        'resources/read',
      );
      assert.equal(await count(), before + 8);
    },
  );

  test('a requestState with our prefix and shape but non-ASCII text passes through like any other', async () => {
    for (const [endpoint, name] of [
      ['/servers/raw/mcp', 'state'],
      ['/mcp', 'raw__state'],
    ] as const) {
      const first = call(name, { mode: 'lookalike' }, { elicitation: {} });
      const asked = inputRequired(await send(`${gw.url}${endpoint}`, first));
      assert.ok(asked.requestState.startsWith('mcpgw1.'));
      const answer = await send(`${gw.url}${endpoint}`, retry(first, asked.requestState, { 'user answer': ELICIT_OK }));
      assert.equal(answer.status, 200, `${endpoint}: ${answer.status} ${JSON.stringify(answer.body)}`);
      assert.equal(JSON.parse(textOf(complete(answer))).identical, true, endpoint);
    }
  });

  test('the gateway logged none of the requestStates it carried', () => {
    const logged = JSON.stringify(recording.lines);
    assert.ok(recording.lines.length > 0);
    // From the json, lookalike, plain, big and SDK fixture states (none of them has quotes to be escaped).
    for (const fragment of ['2.50', 'mcpgw1.héllo', 'plain-state', 'big:', 'prompt-state', 'héllo 世界'])
      assert.ok(!logged.includes(fragment), fragment);
  });
});

test('a retry to a modern upstream whose era is not known yet (just started) still passes through', async () => {
  // The fixture answers server/discover only after a second, so the retry arrives while the era is unknown.
  const gw = await startGw({ raw: mrtrRaw({ DISCOVER_DELAY_MS: '1000' }) });
  try {
    const first = call('state', { mode: 'plain' }, { elicitation: {} });
    const answer = await send(`${gw.url}/servers/raw/mcp`, retry(first, 'plain-state', { 'user answer': ELICIT_OK }));
    assert.equal(answer.body?.error, undefined, JSON.stringify(answer.body));
    assert.equal(JSON.parse(textOf(complete(answer))).identical, true);
  } finally {
    await gw.close();
  }
});
