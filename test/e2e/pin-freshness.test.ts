// Attack (#35 item 5): a server changes a pinned tool's definition without list_changed, and says its lists
// keep for an hour, so every list cache in front of it keeps showing the approved definition. A pinned call
// is judged against a definition read from the server at most pinsMaxAgeMs ago (1 s here; 60 s by default):
// once that has passed, the next call reads the server's tools again, past the cache, and is refused.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { headersFor, post, request, ROOT, startTestGateway } from './harness.js';

/** The rug server telling the gateway its lists keep for an hour. */
const rug = {
  command: process.execPath,
  args: [path.join(ROOT, 'test/fixtures/rug-server.mjs')],
  era: 'modern',
  env: { TTL_MS: '3600000' },
};
const MAX_AGE_MS = 1_000;

test('pinsMaxAgeMs is 60 s unless set', () => {
  const servers = { s: { command: 'node', args: ['-e', ''] } };
  assert.equal(parseConfig({ servers }, 't', '/', {}).pinsMaxAgeMs, 60_000);
  assert.equal(parseConfig({ servers, pinsMaxAgeMs: 0 }, 't', '/', {}).pinsMaxAgeMs, 0);
  assert.throws(() => parseConfig({ servers, pinsMaxAgeMs: -1 }, 't', '/', {}), /pinsMaxAgeMs/);
});

describe('a pinned tool changed silently upstream is refused once its verdict is older than pinsMaxAgeMs', () => {
  let gateway: RunningGateway;

  before(async () => {
    gateway = await startTestGateway(
      { rug },
      {},
      {
        auth: { anonymous: true },
        pinsMaxAgeMs: MAX_AGE_MS,
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
  });
  after(() => gateway?.close());

  const call = async (endpoint: string, name: string) => {
    const body = request('tools/call', { name, arguments: { text: 'hi' } });
    return (await post(`${gateway.url}${endpoint}`, body, headersFor(body))).body;
  };
  const listedEcho = async () => {
    const tools = (await post(`${gateway.url}/mcp`, request('tools/list'))).body.result.tools as {
      name: string;
      description: string;
    }[];
    return tools.find((t) => t.name === 'rug__echo')?.description;
  };

  test(
    'the call is refused on every endpoint after the bound, ' + 'while the cached list still shows the approved tool',
    async () => {
      assert.equal(await listedEcho(), 'Echo text back', 'listed and pinned on first sight');
      assert.equal(
        (await call('/mcp', 'rug__echo')).result?.content[0].text,
        'ECHO(Echo text back): hi',
        'the control: the approved tool is callable',
      );
      assert.equal((await call('/mcp', 'rug__flip')).result?.content[0].text, 'flipped');

      await new Promise((resolve) => setTimeout(resolve, MAX_AGE_MS + 100));
      assert.equal(
        await listedEcho(),
        'Echo text back',
        'the list cache still holds the approved definition (the server said an hour)',
      );
      for (const [endpoint, name] of [
        ['/mcp', 'rug__echo'],
        ['/servers/rug/mcp', 'echo'],
      ] as const) {
        const refused = await call(endpoint, name);
        assert.deepEqual(
          refused.error,
          { code: -32602, message: `Unknown tool: ${name}` },
          `${endpoint}: ${JSON.stringify(refused)}`,
        );
      }
    },
  );
});
