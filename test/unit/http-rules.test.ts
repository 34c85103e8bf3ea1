// The edge's pure per-request checks: media types (with the fast path for what SDKs send), the nesting limit
// and which paths the fast MCP route takes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { mcpEndpointName } from '../../src/edge/exchange.js';
import { checkAccept, checkContentType, MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/edge/http-rules.js';

/** Nests `depth` levels of arrays or objects (a scalar inside the innermost). */
function nest(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

test('nestsDeeperThan: refuses one level past the limit, in arrays and objects, wherever the deep branch is', () => {
  for (const kind of ['array', 'object'] as const) {
    assert.equal(nestsDeeperThan(nest(MAX_JSON_DEPTH, kind), MAX_JSON_DEPTH), false, `${kind}: at the limit`);
    assert.equal(nestsDeeperThan(nest(MAX_JSON_DEPTH + 1, kind), MAX_JSON_DEPTH), true, `${kind}: one past`);
  }
  const deepLast = { a: 1, b: [2, 3], c: { d: nest(MAX_JSON_DEPTH, 'object') } };
  assert.equal(nestsDeeperThan(deepLast, MAX_JSON_DEPTH), true, 'the deep branch is the last key');
  assert.equal(
    nestsDeeperThan(JSON.parse('{"__proto__":{"x":[[[1]]]}}'), 3),
    true,
    'a "__proto__" key is walked like any other',
  );
  assert.equal(nestsDeeperThan('text', 0), false);
  assert.equal(nestsDeeperThan({}, 0), true);
});

test('nestsDeeperThan agrees with the depth of any JSON value', () => {
  const depthOf = (value: unknown): number =>
    value === null || typeof value !== 'object' ? 0 : 1 + Math.max(0, ...Object.values(value as object).map(depthOf));
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, limit) => {
      assert.equal(nestsDeeperThan(value, limit), depthOf(value) > limit);
    }),
    { numRuns: 500 },
  );
});

test('checkContentType and checkAccept: the usual headers pass, every other spelling is parsed as before', () => {
  assert.equal(checkContentType('application/json'), undefined);
  assert.equal(checkContentType('Application/JSON; charset=utf-8'), undefined);
  assert.equal(checkContentType('text/plain')?.status, 415);
  assert.equal(checkContentType(null)?.status, 415);
  assert.equal(checkAccept('application/json, text/event-stream'), undefined);
  assert.equal(checkAccept('text/event-stream;q=0.5, application/json'), undefined);
  assert.equal(checkAccept('*/*'), undefined);
  assert.equal(checkAccept(null), undefined);
  assert.equal(checkAccept('application/json')?.status, 406);
  assert.equal(checkAccept('application/json,text/event-streams')?.status, 406);
});

test('mcpEndpointName: only the plain spellings of the MCP paths take the fast route', () => {
  assert.equal(mcpEndpointName('/mcp'), '');
  assert.equal(mcpEndpointName('/mcp?x=1'), '');
  assert.equal(mcpEndpointName('/servers/everything/mcp'), 'everything');
  assert.equal(mcpEndpointName('/servers/a_b-C9/mcp?trace=1'), 'a_b-C9');
  for (const other of [
    '/',
    '/mcp/',
    '/MCP',
    '/servers//mcp',
    '/servers/a/b/mcp',
    '/servers/%61/mcp',
    '/servers/../mcp',
    '/servers/a/mcp/',
    '/healthz',
    '/servers/mcp',
  ]) {
    assert.equal(mcpEndpointName(other), undefined, other);
  }
});
