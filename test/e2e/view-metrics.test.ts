// A refusal on a view is counted under the view's own endpoint label, as its requests are
// (requests_total says "profiles/<name>" or "search"): it was counted as "mcp".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, post, request, startTestGateway } from './harness.js';

describe('policy denials on views, by endpoint', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway(
      { modern: fixture('modern-server') },
      {},
      {
        auth: { anonymous: true },
        policies: [
          {
            name: 'echo-only',
            principals: { ids: ['anonymous'] },
            allow: { servers: ['modern'], tools: ['modern__echo'] },
          },
        ],
        profiles: { p: { tools: ['modern__*'] } },
      },
    );
  });
  after(() => gateway?.close());

  const denials = async (endpoint: string): Promise<number> => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`mcp_gateway_policy_denials_total{endpoint="${endpoint}",method="tools/call"}`));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };

  test(
    'a denied call on a profile is counted as profiles/<name>, ' + 'one on /search/mcp as search, one on /mcp as mcp',
    async () => {
      const denied = request('tools/call', { name: 'modern__pid', arguments: {} });
      const viaSearch = request('tools/call', { name: 'call_tool', arguments: { name: 'modern__pid', arguments: {} } });
      assert.ok((await post(`${gateway.url}/profiles/p/mcp`, denied)).body.error, 'refused on the profile');
      await post(`${gateway.url}/search/mcp`, viaSearch);
      assert.ok((await post(`${gateway.url}/mcp`, { ...denied, id: 'again' })).body.error, 'refused on /mcp');
      assert.equal(await denials('profiles/p'), 1);
      assert.equal(await denials('search'), 1);
      assert.equal(await denials('mcp'), 1);
    },
  );
});
