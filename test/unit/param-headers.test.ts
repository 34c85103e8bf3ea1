import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolHeaderIndex } from '../../src/edge/param-headers.js';

const listResult = {
  resultType: 'complete',
  tools: [
    {
      name: 'execute_sql',
      inputSchema: {
        type: 'object',
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          query: { type: 'string' },
          limit: { type: 'integer', 'x-mcp-header': 'Limit' },
          dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
          options: {
            type: 'object',
            properties: {
              tenant: { type: 'string', 'x-mcp-header': 'Tenant' },
            },
          },
          tags: {
            type: 'array',
            items: { type: 'string', 'x-mcp-header': 'Tag' },
          },
        },
      },
    },
    { name: 'plain_tool', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } },
  ],
};

function indexed(): ToolHeaderIndex {
  const index = new ToolHeaderIndex();
  index.learn(listResult);
  return index;
}

/** A header getter like the edge's: it is asked with lower-case names only. */
function headers(values: Record<string, string>) {
  const asked: string[] = [];
  const map = new Map(Object.entries(values).map(([k, v]) => [k.toLowerCase(), v]));
  const get = (name: string) => {
    asked.push(name);
    return map.get(name);
  };
  return { get, asked };
}

const fullArgs = { region: 'us-west1', query: 'select 1', limit: 42, dryRun: true, options: { tenant: 'acme' } };
const fullHeaders = {
  'Mcp-Param-Region': 'us-west1',
  'Mcp-Param-Limit': '42',
  'Mcp-Param-Dry-Run': 'true',
  'Mcp-Param-Tenant': 'acme',
};

test('matching headers for every mirrored argument (top-level and nested) → ok', () => {
  assert.equal(indexed().check('execute_sql', fullArgs, headers(fullHeaders).get), undefined);
});

test('the getter is asked with lower-case names, including the nested one; items are not asked for', () => {
  const h = headers(fullHeaders);
  indexed().check('execute_sql', fullArgs, h.get);
  assert.deepEqual([...h.asked].sort(), [
    'mcp-param-dry-run',
    'mcp-param-limit',
    'mcp-param-region',
    'mcp-param-tenant',
  ]);
});

test('missing header while the argument is present → a problem naming the header', () => {
  const { 'Mcp-Param-Region': _omit, ...rest } = fullHeaders;
  const problem = indexed().check('execute_sql', fullArgs, headers(rest).get);
  assert.equal(typeof problem, 'string');
  assert.match(problem!, /mcp-param-region/);
  assert.match(problem!, /missing/);
});

test('missing nested header while the nested argument is present → problem', () => {
  const { 'Mcp-Param-Tenant': _omit, ...rest } = fullHeaders;
  const problem = indexed().check('execute_sql', fullArgs, headers(rest).get);
  assert.match(problem ?? '', /mcp-param-tenant/);
  assert.match(problem ?? '', /options\.tenant/);
});

test('a header that does not match its argument → problem', () => {
  const problem = indexed().check(
    'execute_sql',
    fullArgs,
    headers({ ...fullHeaders, 'Mcp-Param-Region': 'eu-central1' }).get,
  );
  assert.match(problem ?? '', /mcp-param-region does not match arguments\.region/);
});

test('string comparison is exact (case matters in values)', () => {
  const problem = indexed().check(
    'execute_sql',
    fullArgs,
    headers({ ...fullHeaders, 'Mcp-Param-Region': 'US-WEST1' }).get,
  );
  assert.notEqual(problem, undefined);
});

test('header names declared in mixed case are matched case-insensitively', () => {
  const index = new ToolHeaderIndex();
  index.learn({
    tools: [
      { name: 't', inputSchema: { type: 'object', properties: { r: { type: 'string', 'x-mcp-header': 'MyRegion' } } } },
    ],
  });
  const h = headers({ 'MCP-PARAM-MYREGION': 'x' });
  assert.equal(index.check('t', { r: 'x' }, h.get), undefined);
  assert.deepEqual(h.asked, ['mcp-param-myregion']);
});

test('a base64-encoded header matches a non-ASCII argument', () => {
  const args = { ...fullArgs, region: 'Zürich 世界' };
  const encoded = '=?base64?' + Buffer.from('Zürich 世界').toString('base64') + '?=';
  assert.equal(
    indexed().check('execute_sql', args, headers({ ...fullHeaders, 'Mcp-Param-Region': encoded }).get),
    undefined,
  );
});

test('a base64-encoded header of a different value does not match', () => {
  const encoded = '=?base64?' + Buffer.from('Zürich').toString('base64') + '?=';
  const problem = indexed().check(
    'execute_sql',
    { ...fullArgs, region: 'Zurich' },
    headers({ ...fullHeaders, 'Mcp-Param-Region': encoded }).get,
  );
  assert.notEqual(problem, undefined);
});

test('a raw header value that is not a valid header value → problem', () => {
  const problem = indexed().check(
    'execute_sql',
    { ...fullArgs, region: 'café' },
    headers({ ...fullHeaders, 'Mcp-Param-Region': 'café' }).get,
  );
  assert.notEqual(problem, undefined);
});

test('integers compare numerically: "42.0" equals 42', () => {
  assert.equal(
    indexed().check('execute_sql', fullArgs, headers({ ...fullHeaders, 'Mcp-Param-Limit': '42.0' }).get),
    undefined,
  );
});

test('integers: "43" does not equal 42, and non-numbers never do', () => {
  const index = indexed();
  assert.notEqual(
    index.check('execute_sql', fullArgs, headers({ ...fullHeaders, 'Mcp-Param-Limit': '43' }).get),
    undefined,
  );
  assert.notEqual(
    index.check('execute_sql', fullArgs, headers({ ...fullHeaders, 'Mcp-Param-Limit': 'forty-two' }).get),
    undefined,
  );
  assert.notEqual(
    index.check('execute_sql', { ...fullArgs, limit: 0 }, headers({ ...fullHeaders, 'Mcp-Param-Limit': '' }).get),
    undefined,
  );
});

test('integers: a hexadecimal header "0x2A" is not the decimal 42 a router would read', () => {
  assert.notEqual(
    indexed().check('execute_sql', fullArgs, headers({ ...fullHeaders, 'Mcp-Param-Limit': '0x2A' }).get),
    undefined,
  );
});

test('booleans: "true" matches true, "false" does not', () => {
  const index = indexed();
  assert.equal(index.check('execute_sql', fullArgs, headers(fullHeaders).get), undefined);
  assert.notEqual(
    index.check('execute_sql', fullArgs, headers({ ...fullHeaders, 'Mcp-Param-Dry-Run': 'false' }).get),
    undefined,
  );
  assert.equal(
    index.check(
      'execute_sql',
      { ...fullArgs, dryRun: false },
      headers({ ...fullHeaders, 'Mcp-Param-Dry-Run': 'false' }).get,
    ),
    undefined,
  );
});

test('argument absent and header absent → ok', () => {
  assert.equal(indexed().check('execute_sql', { query: 'select 1' }, headers({}).get), undefined);
  assert.equal(indexed().check('execute_sql', undefined, headers({}).get), undefined);
});

test('argument null counts as absent: no header expected', () => {
  assert.equal(indexed().check('execute_sql', { region: null }, headers({}).get), undefined);
});

test('header present while the argument is absent → problem', () => {
  const problem = indexed().check('execute_sql', { query: 'q' }, headers({ 'Mcp-Param-Region': 'us-west1' }).get);
  assert.match(problem ?? '', /set but arguments\.region is absent/);
});

test('an unknown tool is not checked → undefined', () => {
  assert.equal(indexed().check('nope', { region: 'x' }, headers({ 'Mcp-Param-Region': 'y' }).get), undefined);
});

test('a tool with no x-mcp-header declarations is not checked', () => {
  assert.equal(indexed().check('plain_tool', { a: 'x' }, headers({ 'Mcp-Param-A': 'y' }).get), undefined);
});

test('x-mcp-header under items is ignored', () => {
  const h = headers({});
  assert.equal(indexed().check('execute_sql', { tags: ['a', 'b'] }, h.get), undefined);
  assert.ok(!h.asked.includes('mcp-param-tag'));
});

test('a re-listed tool without declarations is forgotten', () => {
  const index = indexed();
  index.learn({
    tools: [{ name: 'execute_sql', inputSchema: { type: 'object', properties: { region: { type: 'string' } } } }],
  });
  assert.equal(index.check('execute_sql', { region: 'x' }, headers({}).get), undefined);
});

test('learn ignores results that are not tools/list shaped', () => {
  const index = new ToolHeaderIndex();
  index.learn(null);
  index.learn({ tools: 'nope' });
  index.learn({ tools: [null, { name: 5 }, { name: 'x', inputSchema: 'bad' }] });
  assert.equal(index.check('x', {}, headers({}).get), undefined);
});
