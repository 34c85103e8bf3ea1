// The parts of profiles and search mode that need no gateway: which paths take the fast route, and the
// two tools' definitions and results, valid against the 2026-07-28 schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { viewEndpointName } from '../../src/edge/exchange.js';
import { definitionOf, SEARCH_TOOL_DEFINITIONS, searchResult, toolError } from '../../src/search/search-tools.js';
import { defProblems } from '../schema.js';

test('viewEndpointName: only the plain spellings of /profiles/<name>/mcp and /search/mcp take the fast route', () => {
  assert.equal(viewEndpointName('/search/mcp'), '');
  assert.equal(viewEndpointName('/search/mcp?x=1'), '');
  assert.equal(viewEndpointName('/profiles/coding/mcp'), 'coding');
  assert.equal(viewEndpointName('/profiles/a_b-C9/mcp?trace=1'), 'a_b-C9');
  for (const other of [
    '/profiles//mcp',
    '/profiles/a/b/mcp',
    '/profiles/%61/mcp',
    '/profiles/../mcp',
    '/mcp',
    '/servers/a/mcp',
    '/search/mcp/',
    '/profiles/a/mcpx',
  ]) {
    assert.equal(viewEndpointName(other), undefined, other);
  }
});

test("search mode's two tools are valid tools, and their results valid results", () => {
  assert.deepEqual(
    SEARCH_TOOL_DEFINITIONS.map((tool) => tool.name),
    ['search_tools', 'call_tool'],
  );
  for (const tool of SEARCH_TOOL_DEFINITIONS) assert.deepEqual(defProblems('Tool', tool), [], String(tool.name));
  const full = {
    name: 'a__b',
    title: 'B',
    description: 'Does b',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
    icons: [],
    _meta: { x: 1 },
  };
  assert.deepEqual(definitionOf(full), {
    name: 'a__b',
    title: 'B',
    description: 'Does b',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
  });
  assert.deepEqual(defProblems('CallToolResult', searchResult([definitionOf(full)])), []);
  assert.deepEqual(defProblems('CallToolResult', toolError('say what to send')), []);
});
