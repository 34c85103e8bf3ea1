// server/discover on a view: /mcp's answer retold as the profile's or search mode's own — its name, only
// the features it can show, instructions only where they still hold, and search mode's own hint.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeView, SEARCH_INSTRUCTIONS } from '../../src/profiles/profile-discover.js';
import { Profile, SEARCH_PROFILE } from '../../src/profiles/profile.js';
import type { JsonObject } from '../../protocol/jsonrpc.js';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const MCP: JsonObject = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28'],
  capabilities: {
    tools: { listChanged: true },
    prompts: { listChanged: true },
    resources: {},
    completions: {},
    logging: {},
  },
  ttlMs: 5000,
  cacheScope: 'public',
  instructions: 'Tools and prompts here are named <server>__<name>.\n\n## crm\nUse crm__search first.',
  _meta: { [SERVER_INFO]: { name: 'mcp-gateway', version: '1.2.3' } },
};

const info = (result: JsonObject) => (result._meta as JsonObject)[SERVER_INFO] as JsonObject;

test("a profile is named after its endpoint, and keeps /mcp's version, ttlMs, cacheScope and supportedVersions", () => {
  const result = describeView(new Profile('coding', { tools: ['crm__*'] }), MCP);
  assert.deepEqual(info(result), {
    name: 'mcp-gateway/profiles/coding',
    title: 'mcp-gateway: profile coding',
    version: '1.2.3',
  });
  assert.equal(result.ttlMs, 5000);
  assert.equal(result.cacheScope, 'public');
  assert.deepEqual(result.supportedVersions, ['2026-07-28']);
  assert.equal(info(MCP).name, 'mcp-gateway', '/mcp’s answer (perhaps cached) is not changed in place');
});

test('a kind the profile shows none of is not offered; completions go with prompts and resources', () => {
  const toolsOnly = describeView(new Profile('p', { tools: ['crm__*'], prompts: [], resources: [] }), MCP);
  assert.deepEqual(toolsOnly.capabilities, { tools: { listChanged: true }, logging: {} });
  const promptsOnly = describeView(new Profile('p', { tools: [], resources: [] }), MCP);
  assert.deepEqual(Object.keys(promptsOnly.capabilities as JsonObject).sort(), ['completions', 'logging', 'prompts']);
  const everything = describeView(new Profile('p', {}), MCP);
  assert.deepEqual(everything.capabilities, MCP.capabilities);
});

test('a rename shows nothing its globs leave out: tools: [] with a prompt renamed offers prompts, not tools', () => {
  const result = describeView(
    new Profile('p', { tools: [], prompts: ['crm__*'], rename: { crm__search: 'find' } }),
    MCP,
  );
  assert.equal('tools' in (result.capabilities as JsonObject), false, 'no tool can be listed or called here');
  assert.ok('prompts' in (result.capabilities as JsonObject));
});

test('a feature /mcp does not offer is not offered on a profile either', () => {
  const bare = { ...MCP, capabilities: { tools: {} } };
  assert.deepEqual(describeView(new Profile('p', {}), bare).capabilities, { tools: {} });
});

test("/mcp's instructions are kept only where every tool and prompt is shown under its /mcp name", () => {
  assert.equal(
    describeView(new Profile('p', { describe: { crm__search: 'Find.' } }), MCP).instructions,
    MCP.instructions,
  );
  assert.equal(
    describeView(new Profile('p', { tools: ['crm__*'] }), MCP).instructions,
    undefined,
    'they may name a hidden tool',
  );
  assert.equal(
    describeView(new Profile('p', { rename: { crm__search: 'find' } }), MCP).instructions,
    undefined,
    'they name crm__search, not find',
  );
  assert.ok(!('instructions' in describeView(new Profile('p', { tools: [] }), MCP)));
});

test('search mode: tools are its two fixed tools (no listChanged), and the instructions say how to find tools', () => {
  const search = describeView(SEARCH_PROFILE, MCP);
  assert.equal(info(search).name, 'mcp-gateway/search');
  assert.deepEqual((search.capabilities as JsonObject).tools, {});
  assert.equal(search.instructions, `${SEARCH_INSTRUCTIONS}\n\n${MCP.instructions}`);
  const profile = describeView(new Profile('support', { tools: ['crm__*'], search: true }), {
    ...MCP,
    capabilities: {},
  });
  assert.equal(info(profile).title, 'mcp-gateway: profile support, in search mode');
  assert.deepEqual(
    profile.capabilities,
    { tools: {} },
    'search_tools and call_tool are there even when no server offers tools',
  );
  assert.equal(profile.instructions, SEARCH_INSTRUCTIONS);
});

test("a user's profile named 'search' is a profile, not /search/mcp", () => {
  assert.equal(info(describeView(new Profile('search', {}), MCP)).name, 'mcp-gateway/profiles/search');
});
