// Multi round-trip requests (MRTR) through the gateway (shared plumbing in mrtr-kit.ts): a 2025 upstream
// (server-everything) asking elicitation/create, sampling/createMessage or roots/list in the middle of a call:
// the question becomes input_required for the SDK v2 client, or roots come from the config.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { schemaProblems, eventually, everything, send, textOf } from './harness.js';
import { recordingLog } from '../recording-log.js';
import { startGw, call, retry, inputRequired, complete, withSdkClient, onBothEndpoints, ROOTS } from './mrtr-kit.js';

// ---- 2. legacy server-everything: translation -------------------------------------------------------------

describe('legacy server-everything: questions become input_required, answered by the SDK v2 client', () => {
  let gw: RunningGateway;
  const recording = recordingLog();
  const refusedRoots = (server: string) =>
    recording.lines.some(
      (r) => r.obj.server === server && r.msg === 'answered roots/list from the config' && r.level === 'debug',
    );
  // server-everything asks for roots/list by itself 350 ms after initialize, outside any call: the gateway
  // answers it (no roots configured: none) without a warning. Every test waits until both have been
  // answered, so the question does not land in one of their calls; the first one asserts it.
  let refused: Promise<boolean>;
  before(async () => {
    gw = await startGw({ everything, every2: everything }, {}, recording);
    refused = eventually(() => refusedRoots('everything') && refusedRoots('every2'), 20_000).then(
      () => true,
      () => false,
    );
  });
  beforeEach(() => refused.then(() => undefined));
  after(() => gw.close());

  test('a roots/list outside any call was answered, without a warning', async () => {
    assert.ok(
      await refused,
      `no answer to roots/list logged for both servers: ` +
        `${JSON.stringify(recording.lines.filter((r) => r.obj.method === 'roots/list'))}`,
    );
    assert.deepEqual(
      recording.lines.filter((r) => r.obj.method === 'roots/list' && r.level !== 'debug'),
      [],
    );
  });

  test(
    'raw: trigger-elicitation-request → input_required (schema-valid), ' + "retry → the tool's result with the answer",
    async () => {
      const url = `${gw.url}/servers/everything/mcp`;
      const first = call('trigger-elicitation-request', {}, { elicitation: {} });
      const asked = inputRequired(await send(url, first));
      assert.deepEqual(Object.keys(asked.inputRequests), ['elicitation-1']);
      assert.equal(asked.inputRequests['elicitation-1']!.method, 'elicitation/create');
      assert.match(asked.inputRequests['elicitation-1']!.params.message, /Please provide inputs/);
      assert.ok(asked.requestState.startsWith('mcpgw1.'));
      const result = complete(
        await send(
          url,
          retry(first, asked.requestState, {
            'elicitation-1': { action: 'accept', content: { name: 'Ada Lovelace', check: true } },
          }),
        ),
      );
      assert.match(textOf(result), /Name: Ada Lovelace/);
      assert.match(textOf(result), /Agreed to terms: true/);
    },
  );

  test('SDK v2 client: trigger-elicitation-request through /servers/everything/mcp and /mcp', async () => {
    for (const [endpoint, name] of onBothEndpoints('everything', 'trigger-elicitation-request')) {
      const asked: any[] = [];
      await withSdkClient(
        `${gw.url}${endpoint}`,
        { elicit: (params) => (asked.push(params), { action: 'accept', content: { name: `via ${endpoint}` } }) },
        async (client) => {
          const result = await client.callTool({ name, arguments: {} });
          assert.match(textOf(result), new RegExp(`Name: via ${endpoint.replace(/\//g, '\\/')}`));
          assert.equal(asked.length, 1);
          assert.match(asked[0].message, /Please provide inputs/);
        },
      );
    }
  });

  test('SDK v2 client: trigger-sampling-request through /servers/everything/mcp and /mcp', async () => {
    for (const [endpoint, name] of onBothEndpoints('everything', 'trigger-sampling-request')) {
      const asked: any[] = [];
      const sample = (params: any) => {
        asked.push(params);
        return {
          model: 'test-model',
          role: 'assistant',
          content: { type: 'text', text: `sampled for ${params.messages[0].content.text}` },
        };
      };
      await withSdkClient(`${gw.url}${endpoint}`, { sample }, async (client) => {
        const result = await client.callTool({ name, arguments: { prompt: 'a haiku' } });
        assert.match(textOf(result), /sampled for Resource trigger-sampling-request context: a haiku/);
        assert.match(textOf(result), /test-model/);
        assert.equal(asked.length, 1);
      });
    }
  });

  test(
    'without the capability declared: ' + '-32021 with data.requiredCapabilities, and the upstream is not left hanging',
    async () => {
      const url = `${gw.url}/servers/everything/mcp`;
      for (const [tool, needed, args] of [
        ['trigger-elicitation-request', 'elicitation', {}],
        ['trigger-sampling-request', 'sampling', { prompt: 'x' }],
      ] as const) {
        // Declaring the other capabilities does not help.
        const others = Object.fromEntries(
          ['elicitation', 'sampling', 'roots'].filter((c) => c !== needed).map((c) => [c, {}]),
        );
        const answer = await send(url, call(tool, args, others));
        assert.equal(answer.body?.error?.code, -32021, `${tool}: ${JSON.stringify(answer.body)}`);
        assert.deepEqual(answer.body.error.data?.requiredCapabilities, { [needed]: {} }, tool);
        assert.deepEqual(schemaProblems('tools/call', answer.body), [], tool);
      }
      // roots/list is answered for the client as a client without roots would (servers also ask for roots
      // unprompted, which stdio cannot tell from a question of the call in flight): the call completes.
      const roots = await send(url, call('get-roots-list', {}, { elicitation: {}, sampling: {} }));
      assert.equal(roots.body.result?.resultType, 'complete', JSON.stringify(roots.body));
      // The child answers the next calls at once: nothing of the refused calls is still in flight on it.
      assert.match(textOf(complete(await send(url, call('echo', { message: 'still here' })))), /still here/);
      const first = call('trigger-elicitation-request', {}, { elicitation: {} });
      const asked = inputRequired(await send(url, first));
      assert.deepEqual(Object.keys(asked.inputRequests), ['elicitation-1']);
      // Answered, so that no call stays held on this child (one held call makes the next asker ambiguous).
      assert.match(
        textOf(complete(await send(url, retry(first, asked.requestState, { 'elicitation-1': { action: 'decline' } })))),
        /declined/,
      );
    },
  );

  test('SDK v2 client without the capability: the call fails with -32021', async () => {
    await withSdkClient(`${gw.url}/servers/everything/mcp`, {}, async (client) => {
      await assert.rejects(
        client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'x' } }),
        (error: { code?: number }) => error.code === -32021,
      );
    });
  });

  test(
    'SDK v2 client: get-roots-list through /servers/everything/mcp and /mcp ' + '(each child asked once, at start)',
    async () => {
      for (const [endpoint, name, uri] of [
        ['/servers/everything/mcp', 'get-roots-list', 'file:///work/one'],
        ['/mcp', 'every2__get-roots-list', 'file:///work/two'],
      ] as const) {
        let asked = 0;
        await withSdkClient(
          `${gw.url}${endpoint}`,
          { roots: () => (asked++, { roots: [{ uri, name: 'proj' }] }) },
          async (client) => {
            // The child keeps the answer the gateway gave its own roots/list at start (no roots configured:
            // none), so no caller's roots reach a child every caller shares.
            const result = await client.callTool({ name, arguments: {} });
            assert.match(textOf(result), /no roots are currently configured/, endpoint);
            assert.doesNotMatch(textOf(result), new RegExp(uri), endpoint);
            assert.equal(asked, 0, endpoint);
          },
        );
      }
    },
  );
});

describe('roots: from the config on server-everything', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGw({ everything: { ...everything, roots: ROOTS } });
  });
  after(() => gw.close());

  test('get-roots-list is answered from the config: no input_required, no capability needed', async () => {
    const result = complete(await send(`${gw.url}/servers/everything/mcp`, call('get-roots-list')));
    assert.match(textOf(result), /1\. srv\n\s+URI: file:\/\/\/srv/);
  });
});
