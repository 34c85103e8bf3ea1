// Search mode (/search/mcp, and a profile with search: true): tools/list is search_tools and call_tool;
// search_tools finds what the caller may use, best first, and nothing it may not; call_tool is a direct
// call in every respect — a denied name answers as an unknown one, MRTR passes byte for byte and resumes —
// and the index follows list changes. The official SDK v2 client uses it end to end.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { RunningGateway } from '../../src/gateway.js';
import {
  everything,
  eventually,
  fixture,
  headersFor,
  request,
  ROOT,
  schemaProblems,
  startTestGateway,
  VERSION,
  send,
} from './harness.js';
import { startModernHttpServer, type ModernHttpServer } from '../fixtures/http-servers.js';
import { compiledFixture } from '../compiled-fixtures.js';

const mrtr = {
  command: process.execPath,
  args: [compiledFixture('mrtr-server')],
  cwd: ROOT,
  probeTimeoutMs: 30_000,
};
const DEV_KEY = 'dev-key-0123456789abcdef';
const dev = { authorization: `Bearer ${DEV_KEY}` };

let gateway: RunningGateway;
let web: ModernHttpServer;
let search: string;
before(async () => {
  web = await startModernHttpServer();
  gateway = await startTestGateway(
    { everything, modern: fixture('modern-server'), mrtr, web: { url: web.url } },
    {},
    {
      auth: { anonymous: true, apiKeys: [{ key: DEV_KEY, principal: 'dev' }] },
      policies: [
        {
          name: 'open',
          principals: { ids: ['anonymous'] },
          allow: { servers: ['everything', 'modern', 'mrtr', 'web'] },
        },
        {
          name: 'dev',
          principals: { ids: ['dev'] },
          allow: { servers: ['everything', 'modern', 'mrtr'] },
          deny: { tools: ['everything__get-env'] },
        },
      ],
      profiles: {
        sums: {
          tools: ['everything__*'],
          rename: { 'everything__get-sum': 'add_numbers' },
          describe: { add_numbers: 'Add two numbers.' },
          search: true,
        },
      },
    },
  );
  search = `${gateway.url}/search/mcp`;
  // Every server's tools indexed: the first search of each test then sees the whole catalog.
  await eventually(
    async () =>
      (await find(search, 'process id')).includes('modern__pid') &&
      (await find(search, 'sum')).includes('everything__get-sum'),
    30_000,
  );
});
after(async () => {
  await gateway?.close();
  await web?.close();
});

/** The names search_tools returns, best first. */
async function find(
  url: string,
  query: string,
  headers: Record<string, string> = {},
  limit?: number,
): Promise<string[]> {
  const answer = await send(
    url,
    request('tools/call', { name: 'search_tools', arguments: limit === undefined ? { query } : { query, limit } }),
    headers,
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.notEqual(answer.body.result.isError, true, JSON.stringify(answer.body));
  return answer.body.result.structuredContent.tools.map((t: { name: string }) => t.name);
}

const callTool = (
  name: string,
  args: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
  id?: string | number,
) => request('tools/call', { name: 'call_tool', arguments: { name, arguments: args }, ...extra }, id);

describe('search mode', () => {
  test('tools/list lists exactly search_tools and call_tool, valid against the schema', async () => {
    const answer = await send(search, request('tools/list'));
    assert.deepEqual(schemaProblems('tools/list', answer.body), []);
    assert.deepEqual(
      answer.body.result.tools.map((t: { name: string }) => t.name),
      ['search_tools', 'call_tool'],
    );
    const [searchTools, callToolDef] = answer.body.result.tools;
    assert.deepEqual(searchTools.inputSchema.required, ['query']);
    assert.equal(searchTools.outputSchema.properties.tools.type, 'array');
    assert.deepEqual(callToolDef.inputSchema.required, ['name']);
  });

  test(
    'an obvious query finds its tool first, ' + 'with its full definition as structured content and as text',
    async () => {
      const answer = await send(
        search,
        request('tools/call', { name: 'search_tools', arguments: { query: 'sum of two numbers', limit: 3 } }),
      );
      assert.deepEqual(schemaProblems('tools/call', answer.body), []);
      const { structuredContent, content } = answer.body.result;
      assert.ok(structuredContent.tools.length <= 3);
      const first = structuredContent.tools[0];
      assert.equal(first.name, 'everything__get-sum');
      assert.equal(first.description, 'Returns the sum of two numbers');
      assert.deepEqual(Object.keys(first.inputSchema.properties).sort(), ['a', 'b']);
      assert.deepEqual(JSON.parse(content[0].text), structuredContent);
      assert.equal((await find(search, 'environment variables'))[0], 'everything__get-env');
    },
  );

  test('wrong arguments to search_tools or call_tool are tool errors the model can correct', async () => {
    const noQuery = await send(search, request('tools/call', { name: 'search_tools', arguments: {} }));
    assert.equal(noQuery.body.result.isError, true);
    assert.match(noQuery.body.result.content[0].text, /search_tools needs query/);
    const badLimit = await send(
      search,
      request('tools/call', { name: 'search_tools', arguments: { query: 'x', limit: 0 } }),
    );
    assert.match(badLimit.body.result.content[0].text, /limit must be a whole number from 1 to 50/);
    const noName = await send(search, request('tools/call', { name: 'call_tool', arguments: {} }));
    assert.match(noName.body.result.content[0].text, /call_tool needs name/);
  });

  test('call_tool calls the tool and returns its result as a direct call does', async () => {
    const via = await send(search, callTool('everything__get-sum', { a: 2, b: 3 }, {}, 'same'));
    const direct = await send(
      `${gateway.url}/mcp`,
      request('tools/call', { name: 'everything__get-sum', arguments: { a: 2, b: 3 } }, 'same'),
    );
    assert.deepEqual(via.body, direct.body);
    assert.deepEqual(via.body.result.content, [{ type: 'text', text: 'The sum of 2 and 3 is 5.' }]);
  });

  test(
    'call_tool sends the Mcp-Param-* headers the tool mirrors its arguments into, ' + 'as its client would have',
    async () => {
      const called = await send(search, callTool('web__region', { region: 'Zürich' }));
      assert.deepEqual(
        called.body.result?.content,
        [{ type: 'text', text: 'region Zürich' }],
        JSON.stringify(called.body),
      );
      const sent = web.requests.filter((headers) => headers['mcp-method'] === 'tools/call').at(-1)!;
      assert.equal(sent['mcp-name'], 'region');
      assert.equal(sent['mcp-param-region'], `=?base64?${Buffer.from('Zürich').toString('base64')}?=`);
    },
  );

  test('a denied tool never appears in results, and call_tool answers it exactly as an unknown name', async () => {
    assert.ok(!(await find(search, 'environment variables', dev, 50)).includes('everything__get-env'));
    assert.equal(
      (await find(search, 'sum of two numbers', dev))[0],
      'everything__get-sum',
      'what dev may use is still found',
    );
    const denied = await send(search, callTool('everything__get-env', {}, {}, 11), dev);
    const unknown = await send(search, callTool('everything__nosuch', {}, {}, 11), dev);
    const directDenied = await send(
      `${gateway.url}/mcp`,
      request('tools/call', { name: 'everything__get-env', arguments: {} }, 11),
      dev,
    );
    assert.deepEqual(denied.body, {
      jsonrpc: '2.0',
      id: 11,
      error: { code: -32602, message: 'Unknown tool: everything__get-env' },
    });
    assert.deepEqual(denied.body, directDenied.body);
    assert.equal(denied.status, unknown.status);
    assert.equal(
      JSON.stringify(denied.body).replace('everything__get-env', '<name>'),
      JSON.stringify(unknown.body).replace('everything__nosuch', '<name>'),
    );
  });

  test(
    'MRTR through call_tool: input_required byte for byte as a direct call, and a retry of call_tool resumes ' +
      'the call',
    async () => {
      const caps = { _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } } };
      const viaBody = callTool('mrtr__confirm', { env: 'prod' }, caps, 'm1');
      const directBody = request('tools/call', { name: 'mrtr__confirm', arguments: { env: 'prod' }, ...caps }, 'm1');
      const raw = async (url: string, body: { method: string; params: Record<string, unknown> }) =>
        (await fetch(url, { method: 'POST', headers: headersFor(body), body: JSON.stringify(body) })).text();
      const viaText = await raw(search, viaBody);
      assert.equal(viaText, await raw(`${gateway.url}/mcp`, directBody));
      const asked = JSON.parse(viaText).result;
      assert.equal(asked.resultType, 'input_required');
      const answers = {
        requestState: asked.requestState,
        inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
      };
      const retry = { ...viaBody, id: 'm2', params: { ...viaBody.params, ...answers } };
      const directRetry = { ...directBody, id: 'm2', params: { ...directBody.params, ...answers } };
      const resumed = await raw(search, retry);
      assert.equal(resumed, await raw(`${gateway.url}/mcp`, directRetry));
      assert.match(JSON.parse(resumed).result.content[0].text, /^answer=\{"ok":true\} stateIntact=true$/);
    },
  );

  test('a tool a server adds is findable within 1 s of its list change', async () => {
    assert.deepEqual(await find(search, 'added'), []);
    const added = await send(search, callTool('modern__add-tool'));
    assert.deepEqual(added.body.result.content, [{ type: 'text', text: 'added-1' }]);
    await eventually(async () => (await find(search, 'added'))[0] === 'modern__added-1', 1_000);
    // And callable at once: the router reads the changed list again on the first call.
    const called = await send(search, callTool('modern__added-1'));
    assert.deepEqual(called.body.result?.content, [{ type: 'text', text: 'added-1' }], JSON.stringify(called.body));
  });

  test('a search-mode profile searches only its tools, under their public names and descriptions', async () => {
    const sums = `${gateway.url}/profiles/sums/mcp`;
    const answer = await send(
      sums,
      request('tools/call', { name: 'search_tools', arguments: { query: 'sum of two numbers' } }),
    );
    const first = answer.body.result.structuredContent.tools[0];
    assert.equal(first.name, 'add_numbers');
    assert.equal(first.description, 'Add two numbers.');
    assert.ok(!(await find(sums, 'process id', {}, 50)).includes('modern__pid'), 'outside the profile');
    const called = await send(sums, callTool('add_numbers', { a: 1, b: 1 }));
    assert.deepEqual(called.body.result.content, [{ type: 'text', text: 'The sum of 1 and 1 is 2.' }]);
    const outside = await send(sums, callTool('modern__pid', {}, {}, 5));
    assert.deepEqual(outside.body, {
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32602, message: 'Unknown tool: modern__pid' },
    });
  });
});

/**
 * What a client of either SDK generation sees first: the two tools listed, and a search for a sum finding it first (its
 * name returned).
 */
async function listsAndFindsTheSum(client: Client | Client1): Promise<string> {
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((t) => t.name),
    ['search_tools', 'call_tool'],
  );
  const found = await client.callTool({ name: 'search_tools', arguments: { query: 'sum of two numbers' } });
  const hits = (found.structuredContent as { tools: { name: string }[] }).tools;
  assert.equal(hits[0]!.name, 'everything__get-sum');
  return hits[0]!.name;
}

describe('SDK v2 client → /search/mcp → server-everything and a modern fixture', () => {
  let client: Client;
  before(async () => {
    client = new Client({ name: 'search-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: VERSION } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(search)));
  });
  after(() => client?.close());

  test('lists the two tools, searches, and calls what it found', async () => {
    // The SDK checks structuredContent against search_tools' outputSchema.
    const found = await listsAndFindsTheSum(client);
    const sum = await client.callTool({ name: 'call_tool', arguments: { name: found, arguments: { a: 20, b: 22 } } });
    assert.deepEqual(sum.content, [{ type: 'text', text: 'The sum of 20 and 22 is 42.' }]);
    const echo = await client.callTool({
      name: 'call_tool',
      arguments: { name: 'modern__echo', arguments: { text: 'héllo, 世界' } },
    });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'héllo, 世界' }]);
  });

  test('an unknown name through call_tool is the ordinary unknown-tool error', async () => {
    await assert.rejects(
      client.callTool({ name: 'call_tool', arguments: { name: 'nope', arguments: {} } }),
      (error: { code?: number }) => error.code === -32602,
    );
  });
});

describe('a 2025 client (SDK v1) on /search/mcp', () => {
  let client: Client1;
  const asked: unknown[] = [];
  before(async () => {
    client = new Client1({ name: 'search-sdk1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { ok: true } };
    });
    await client.connect(new Transport1(new URL(search)));
  });
  after(() => client?.close());

  test('search, call, and MRTR through call_tool as real elicitation', async () => {
    await listsAndFindsTheSum(client);
    const confirmed = await client.callTool({
      name: 'call_tool',
      arguments: { name: 'mrtr__confirm', arguments: { env: 'staging' } },
    });
    assert.equal(asked.length, 1, 'the server asked once, through the 2025 session');
    assert.deepEqual(confirmed.content, [{ type: 'text', text: 'answer={"ok":true} stateIntact=true' }]);
  });
});
