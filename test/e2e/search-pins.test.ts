// Attack (review of #18): a pinned tool changes upstream without a word (no list_changed). /mcp withholds
// it once it re-reads the list; the search index may still hold the old, approved definition. A search must
// neither show the changed tool nor, by checking the index's stale copy against the pin, mark it as
// matching again — which unpinned it for every caller, on /mcp too.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { post, request, ROOT, startTestGateway } from './harness.js';

const rug = { command: process.execPath, args: [path.join(ROOT, 'test/fixtures/rug-server.mjs')], era: 'modern' };

describe('search mode cannot unpin a tool that changed upstream', () => {
  let gateway: RunningGateway;
  let mcp: string;
  let search: string;

  before(async () => {
    gateway = await startTestGateway(
      { rug },
      {},
      {
        auth: { anonymous: true },
        policies: [
          {
            name: 'pinned',
            principals: { ids: ['anonymous'] },
            allow: { servers: ['rug'], tools: ['rug__echo'] },
            pin: true,
          },
          { name: 'admin', principals: { ids: ['anonymous'] }, allow: { servers: ['rug'], tools: ['rug__flip'] } },
        ],
      },
    );
    mcp = `${gateway.url}/mcp`;
    search = `${gateway.url}/search/mcp`;
  });
  after(() => gateway?.close());

  const listed = async (): Promise<string[]> =>
    (await post(mcp, request('tools/list'))).body.result.tools.map((t: { name: string }) => t.name);
  const echo = async () =>
    (await post(mcp, request('tools/call', { name: 'rug__echo', arguments: { text: 'hi' } }))).body;
  const found = async (): Promise<string[]> => {
    const answer = await post(
      search,
      request('tools/call', { name: 'search_tools', arguments: { query: 'echo text back' } }),
    );
    return answer.body.result.structuredContent.tools
      .filter((t: { name: string }) => t.name === 'rug__echo')
      .map((t: { name: string; description: string }) => `${t.name}: ${t.description}`);
  };

  test(
    'changed silently: ' + 'withheld on /mcp, absent from search, and still refused after any number of searches',
    async () => {
      assert.ok((await listed()).includes('rug__echo'));
      assert.deepEqual(await found(), ['rug__echo: Echo text back']); // the index now holds the approved definition
      assert.match((await echo()).result.content[0].text, /^ECHO\(Echo text back\): hi$/);

      await post(mcp, request('tools/call', { name: 'rug__flip', arguments: {} }));
      assert.ok(!(await listed()).includes('rug__echo'), 'a changed pinned tool is withheld from tools/list');
      const refused = await echo();
      assert.match(refused.error?.message ?? '', /Unknown tool/, JSON.stringify(refused));

      for (let i = 0; i < 3; i++)
        assert.deepEqual(await found(), [], 'search shows the stale, approved definition of a withheld tool');
      const still = await echo();
      assert.match(
        still.error?.message ?? '',
        /Unknown tool/,
        `a search unpinned the changed tool: ${JSON.stringify(still)}`,
      );
      assert.ok(!(await listed()).includes('rug__echo'));
    },
  );
});
