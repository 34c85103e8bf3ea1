// A listen stream on a profile hears only of changes in what the profile may show: a curated view must not
// tell its callers that an upstream it hides changed its tools (or prompts, or resources). Two real upstreams
// behind one gateway; each change is proven heard on /mcp first, so "nothing arrived" on the profile is no
// matter of waiting long enough. The same holds on a 2025 session's GET stream; /search/mcp hears of all.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { eventually, fixture, openListen, post, request, sseMessages, startTestGateway, until } from './harness.js';

type Listen = Awaited<ReturnType<typeof openListen>>;

const CHANGED = /^notifications\/(tools|prompts|resources)\/list_changed$/;
const changes = (messages: readonly any[]): string[] =>
  messages.filter((m) => CHANGED.test(m?.method)).map((m) => m.method);

describe('list changes on a profile stay within what it shows', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway(
      { alpha: fixture('modern-server'), beta: fixture('modern-server') },
      {},
      {
        profiles: {
          // alpha's tools only; prompts and resources left out (every one).
          alphaTools: { tools: ['alpha__*'] },
          // alpha's tools and prompts, no resources.
          narrow: { tools: ['alpha__*'], prompts: ['alpha__*'], resources: [], rename: { alpha__echo: 'say' } },
          // A glob over every server's echo: it may show beta's.
          echoes: { tools: ['*__echo'], prompts: [] },
        },
      },
    );
    await eventually(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 60_000);
  });
  after(() => gateway?.close());

  /** Opens the streams, waits for their acknowledgements, runs `body`, closes them. */
  async function listening(
    urls: string[],
    notifications: Record<string, unknown>,
    body: (streams: Listen[]) => Promise<void>,
  ): Promise<void> {
    const streams: Listen[] = [];
    try {
      for (const url of urls) streams.push(await openListen(url, notifications));
      for (const stream of streams) assert.ok(await until(() => stream.messages.length >= 1, 3_000), 'acknowledged');
      await body(streams);
    } finally {
      for (const stream of streams) stream.close();
    }
  }

  /** Waits until `stream` has heard `count` list changes. */
  const heard = async (stream: Listen, count: number, what: string): Promise<void> => {
    assert.ok(
      await until(() => changes(stream.messages).length >= count, 5_000),
      `${what}: ${JSON.stringify(stream.messages)}`,
    );
  };

  test("beta's new tool is not told on a profile showing only alpha's tools; alpha's is", async () => {
    const all = ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'];
    await listening(
      [`${gateway.url}/mcp`, `${gateway.url}/profiles/alphaTools/mcp`],
      Object.fromEntries(all.map((flag) => [flag, true])),
      async ([mcp, profile]) => {
        // The attack: make the hidden upstream change its tools.
        await post(`${gateway.url}/servers/beta/mcp`, request('tools/call', { name: 'add-tool', arguments: {} }));
        await heard(mcp!, 1, '/mcp hears of beta');
        // Then the shown one: on one stream, a notice of beta's change would have come before this one.
        await post(`${gateway.url}/servers/alpha/mcp`, request('tools/call', { name: 'add-tool', arguments: {} }));
        await heard(mcp!, 2, '/mcp hears of alpha');
        await heard(profile!, 1, 'the profile hears of alpha');
        assert.deepEqual(changes(profile!.messages), ['notifications/tools/list_changed'], 'exactly one: alpha’s');
        assert.equal(profile!.messages.at(-1).params._meta['io.modelcontextprotocol/subscriptionId'], profile!.id);
        // The profile's own tools/list agrees: alpha's new tool is there, beta's are not.
        const tools = (
          await post(`${gateway.url}/profiles/alphaTools/mcp`, request('tools/list'))
        ).body.result.tools.map((t: { name: string }) => t.name);
        assert.ok(
          tools.includes('alpha__added-1') && !tools.some((name: string) => name.startsWith('beta__')),
          tools.join(' '),
        );
      },
    );
  });

  test('each kind by its own globs: prompts by prompts, resources only unless []', async () => {
    const flags = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };
    await listening(
      [`${gateway.url}/mcp`, `${gateway.url}/profiles/narrow/mcp`, `${gateway.url}/profiles/alphaTools/mcp`],
      flags,
      async ([mcp, narrow, alphaTools]) => {
        await gateway.cache.invalidate('beta', ['prompts/list', 'resources/list', 'resources/templates/list']);
        await gateway.cache.invalidate('alpha', ['resources/list']);
        await heard(mcp!, 3, '/mcp hears of every change');
        await gateway.cache.invalidate('alpha', ['prompts/list']);
        await heard(mcp!, 4, '/mcp hears of alpha’s prompts');
        await heard(narrow!, 1, 'narrow hears of alpha’s prompts');
        assert.deepEqual(
          changes(narrow!.messages),
          ['notifications/prompts/list_changed'],
          'neither beta’s prompts nor any resources',
        );
        // Left out, prompts and resources are every one's: beta's prompts and resources are told there.
        await heard(alphaTools!, 4, 'alphaTools hears of the rest');
        assert.deepEqual(changes(alphaTools!.messages), [
          'notifications/prompts/list_changed',
          'notifications/resources/list_changed',
          'notifications/resources/list_changed',
          'notifications/prompts/list_changed',
        ]);
      },
    );
  });

  test('a glob over every server hears of each; /search/mcp (every tool) hears of each', async () => {
    await listening(
      [`${gateway.url}/profiles/echoes/mcp`, `${gateway.url}/search/mcp`],
      { toolsListChanged: true, promptsListChanged: true },
      async ([echoes, search]) => {
        await gateway.cache.invalidate('beta', ['tools/list', 'prompts/list']);
        await gateway.cache.invalidate('alpha', ['tools/list']);
        await heard(echoes!, 2, 'echoes hears of both');
        assert.deepEqual(
          changes(echoes!.messages),
          ['notifications/tools/list_changed', 'notifications/tools/list_changed'],
          'prompts: [] hears of no prompts',
        );
        await heard(search!, 3, 'search hears of every change');
      },
    );
  });

  test("a 2025 session's GET stream on the profile is held to the same", async () => {
    const url = `${gateway.url}/profiles/alphaTools/mcp`;
    const legacyHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(url, {
      method: 'POST',
      headers: legacyHeaders,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      }),
    });
    assert.equal(init.status, 200, await init.clone().text());
    await init.text();
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    const initialized = await fetch(url, {
      method: 'POST',
      headers: { ...legacyHeaders, ...session },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    assert.equal(initialized.status, 202);
    const controller = new AbortController();
    const stream = await fetch(url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', ...session },
      signal: controller.signal,
    });
    // The stream is among the listeners once its headers are out.
    assert.equal(stream.status, 200);
    const { messages, done } = sseMessages(stream);
    done.catch(() => {}); // closed by the test
    try {
      await gateway.cache.invalidate('beta', ['tools/list']);
      await gateway.cache.invalidate('alpha', ['tools/list']);
      assert.ok(await until(() => changes(messages).length >= 1, 5_000), JSON.stringify(messages));
      // Both were published in this order, each written at once: beta's would be first.
      assert.deepEqual(changes(messages), ['notifications/tools/list_changed']);
      assert.deepEqual(
        messages.find((m) => CHANGED.test(m?.method)),
        { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: {} },
        'alpha’s, in 2025 form',
      );
    } finally {
      controller.abort();
    }
  });
});
