// Multi round-trip requests (MRTR) through the gateway (shared plumbing in mrtr-kit.ts): a call held for its
// client's answer: it expires after mrtr.holdMs, the server's timeoutMs does not run meanwhile, a child that
// crashes answers the retry at once, and a legacy HTTP upstream's questions travel on each call's own stream.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, schemaProblems, eventually, textOf, send } from './harness.js';
import { startLegacyHttpServer, type LegacyHttpServer } from '../fixtures/http-servers.js';
import { startGw, call, retry, inputRequired, complete, invalidState } from './mrtr-kit.js';

describe('mrtr.holdMs: a held call expires', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGw({ legacy: fixture('legacy-server') }, { mrtr: { holdMs: 200 } });
  });
  after(() => gw.close());

  test('a retry after holdMs → -32602 (expired), and the held call was cancelled upstream', async () => {
    const url = `${gw.url}/servers/legacy/mcp`;
    const first = call('ask', {}, { elicitation: {} });
    const asked = inputRequired(await send(url, first));
    await sleep(400);
    invalidState(
      await send(
        url,
        retry(first, asked.requestState, { 'elicitation-1': { action: 'accept', content: { name: 'late' } } }),
      ),
      /expired/,
    );
    // Were the expired call still in flight on the child, the next question would be refused as ambiguous.
    const again = inputRequired(await send(url, call('ask', {}, { elicitation: {} })));
    assert.deepEqual(Object.keys(again.inputRequests), ['elicitation-1']);
  });
});

describe('upstream trouble while a call is held', () => {
  const TIMEOUT_MS = 3_000;
  let gw: RunningGateway;
  let url: string;
  before(async () => {
    // A few seconds: long enough for a loaded machine to answer a call at once after the child's restart (1 s
    // was not), short enough that the held call below outlives it.
    gw = await startGw({ legacy: fixture('legacy-server', { timeoutMs: TIMEOUT_MS }) });
    url = `${gw.url}/servers/legacy/mcp`;
    await ready();
  });
  // Waiting for a (re)start counts against a request's timeoutMs: start each call with the child ready.
  const ready = () => eventually(() => gw.upstreams.get('legacy')!.status().state === 'ready', 20_000);
  after(() => gw.close());
  const responses = { 'elicitation-1': { action: 'accept', content: { name: 'late' } } };

  test(
    "the server's timeoutMs does not run while the person answers: a retry after it still completes, and the " +
      'child is free again',
    async () => {
      const first = call('ask', {}, { elicitation: {} });
      const asked = inputRequired(await send(url, first));
      await sleep(TIMEOUT_MS + 300); // longer than the server's timeoutMs, shorter than mrtr.holdMs
      complete(await send(url, retry(first, asked.requestState, responses)));
      // Were the call still in flight on the child, this question would be refused as ambiguous.
      const next = call('ask', {}, { elicitation: {} });
      const again = inputRequired(await send(url, next));
      complete(await send(url, retry(next, again.requestState, responses)));
    },
  );

  test(
    'the child crashing while a call is held: the retry is answered with an error at once (no hang), and calls ' +
      'work after the restart',
    async () => {
      const first = call('ask', {}, { elicitation: {} });
      const asked = inputRequired(await send(url, first));
      await send(url, call('crash'));
      const answer = await send(url, retry(first, asked.requestState, responses));
      assert.ok(answer.body?.error, JSON.stringify(answer.body));
      assert.deepEqual(schemaProblems('tools/call', answer.body), []);
      assert.match(answer.body.error.message, /exited/);
      await ready();
      assert.match(textOf(complete(await send(url, call('echo', { text: 'back' })))), /back/);
    },
  );
});

describe("legacy HTTP upstream: a question travels on its call's own stream", () => {
  let upstream: LegacyHttpServer;
  let gw: RunningGateway;
  before(async () => {
    upstream = await startLegacyHttpServer();
    gw = await startGw({ lh: { url: upstream.url } });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test('two concurrent calls that both ask: each caller gets its own question and its own answer back', async () => {
    const url = `${gw.url}/servers/lh/mcp`;
    const first = [call('ask', {}, { elicitation: {} }), call('ask', {}, { elicitation: {} })];
    const asked = await Promise.all(first.map(async (body) => inputRequired(await send(url, body))));
    for (const a of asked) assert.equal(a.inputRequests['elicitation-1']!.params.message, 'Name?');
    assert.notEqual(asked[0]!.requestState, asked[1]!.requestState);
    // Answered in the other order, with different names.
    const results = await Promise.all(
      [1, 0].map(async (i) =>
        textOf(
          complete(
            await send(
              url,
              retry(first[i]!, asked[i]!.requestState, {
                'elicitation-1': { action: 'accept', content: { name: `caller ${i}` } },
              }),
            ),
          ),
        ),
      ),
    );
    assert.match(results[0]!, /"name":"caller 1"/);
    assert.match(results[1]!, /"name":"caller 0"/);
  });
});
