// search.enabled turns /search/mcp off (a 404 naming the setting; profiles' own search mode stays), and
// server/discover on a profile or in search mode describes that view rather than /mcp.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { SEARCH_INSTRUCTIONS } from '../../src/profiles/profile-discover.js';
import { post, request, ROOT, schemaProblems, startTestGateway } from './harness.js';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const syn = {
  command: process.execPath,
  args: ['test/fixtures/synthetic-server.mjs'],
  cwd: ROOT,
  env: { SERVER_ID: 'one' },
};
const PROFILES = {
  coding: { tools: ['syn__tool-1', 'syn__tool-2'], prompts: [] },
  finder: { tools: ['syn__*'], search: true },
};
const config = (search: Record<string, unknown>) =>
  parseConfig({ listen: { port: 0 }, servers: { syn }, profiles: PROFILES, search }, 'test', ROOT);

test('search mode is on unless turned off', () => {
  assert.equal(parseConfig({ servers: { syn } }, 'test', ROOT).search.enabled, true);
  assert.equal(config({ enabled: 'false' }).search.enabled, false, 'from ${VAR} text too');
  assert.throws(() => config({ enable: false }), /search/);
});

describe('search.enabled: false', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway({ syn }, {}, { profiles: PROFILES, search: { enabled: false } });
  });
  after(() => gateway?.close());

  test('/search/mcp answers 404 naming the setting, and the endpoints listed leave it out', async () => {
    const answer = await post(`${gateway.url}/search/mcp`, request('tools/list'));
    assert.equal(answer.status, 404);
    assert.match(
      answer.body.error.message,
      new RegExp(
        String.raw`^Search mode is off: search\.enabled is false in the config; ` +
          String.raw`set it to true to serve \/search\/mcp\. Endpoints: `,
      ),
    );
    assert.doesNotMatch(answer.body.error.message, /Endpoints: .*\/search\/mcp/);
    assert.match(answer.body.error.message, /\/profiles\/finder\/mcp/);
  });

  test("a server named 'search' that does not exist is still just an unknown server", async () => {
    const answer = await post(`${gateway.url}/servers/search/mcp`, request('tools/list'));
    assert.equal(answer.status, 404);
    assert.match(answer.body.error.message, /^No server named 'search'/);
  });

  test('a profile in search mode is its own opt-in and still works, as do /mcp and the other profiles', async () => {
    const finder = await post(`${gateway.url}/profiles/finder/mcp`, request('tools/list'));
    assert.deepEqual(
      finder.body.result.tools.map((t: { name: string }) => t.name),
      ['search_tools', 'call_tool'],
    );
    assert.equal((await post(`${gateway.url}/mcp`, request('tools/list'))).status, 200);
  });

  test(
    'server/discover on a profile describes the profile: ' + 'its name, what it can show, no /mcp instructions',
    async () => {
      const mcp = (await post(`${gateway.url}/mcp`, request('server/discover'))).body.result;
      assert.ok(
        'prompts' in mcp.capabilities && mcp.instructions,
        'the synthetic server offers prompts and instructions on /mcp',
      );
      const answer = await post(`${gateway.url}/profiles/coding/mcp`, request('server/discover'));
      assert.deepEqual(schemaProblems('server/discover', answer.body), []);
      const result = answer.body.result;
      assert.equal(result._meta[SERVER_INFO].name, 'mcp-gateway/profiles/coding');
      assert.equal(result._meta[SERVER_INFO].version, mcp._meta[SERVER_INFO].version);
      assert.deepEqual(Object.keys(result.capabilities).sort(), ['resources', 'tools'], 'prompts: [] shows none');
      assert.equal(result.instructions, undefined, "/mcp's instructions could name tools this profile hides");
    },
  );

  test("a 2025 client's initialize on a profile describes the profile too", async () => {
    const client = new Client1({ name: 'sdk1', version: '1.0.0' });
    await client.connect(new Transport1(new URL(`${gateway.url}/profiles/coding/mcp`)));
    try {
      assert.equal(client.getServerVersion()?.name, 'mcp-gateway/profiles/coding');
      assert.equal(client.getServerCapabilities()?.prompts, undefined);
      assert.ok(client.getServerCapabilities()?.tools);
      assert.equal(client.getInstructions(), undefined);
    } finally {
      await client.close();
    }
  });

  test('server/discover on a search-mode profile says how to find tools', async () => {
    const answer = await post(`${gateway.url}/profiles/finder/mcp`, request('server/discover'));
    assert.deepEqual(schemaProblems('server/discover', answer.body), []);
    const result = answer.body.result;
    assert.equal(result._meta[SERVER_INFO].title, 'mcp-gateway: profile finder, in search mode');
    assert.deepEqual(result.capabilities.tools, {});
    assert.equal(result.instructions, SEARCH_INSTRUCTIONS);
  });

  test('a reload turns search mode back on, and /search/mcp then describes itself', async () => {
    await gateway.reload(config({ enabled: true }));
    const list = await post(`${gateway.url}/search/mcp`, request('tools/list'));
    assert.equal(list.status, 200, JSON.stringify(list.body));
    const discover = await post(`${gateway.url}/search/mcp`, request('server/discover'));
    assert.deepEqual(schemaProblems('server/discover', discover.body), []);
    assert.equal(discover.body.result._meta[SERVER_INFO].name, 'mcp-gateway/search');
    assert.ok(
      discover.body.result.instructions.startsWith(`${SEARCH_INSTRUCTIONS}\n\n`),
      'then every tool as on /mcp: its instructions hold',
    );
    await gateway.reload(config({ enabled: false }));
    assert.equal((await post(`${gateway.url}/search/mcp`, request('tools/list'))).status, 404);
  });
});
