// The spec's validity rules for x-mcp-header declarations (protocol/x-mcp-header.ts), case by case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headerDeclarationProblem } from '../../protocol/x-mcp-header.js';

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

test('valid: none at all, a string/integer/boolean property, nested properties chains', () => {
  assert.equal(headerDeclarationProblem(undefined), undefined);
  assert.equal(headerDeclarationProblem(object({ a: { type: 'string' } })), undefined);
  assert.equal(
    headerDeclarationProblem(
      object({
        s: { type: 'string', 'x-mcp-header': 'S' },
        i: { type: 'integer', 'x-mcp-header': 'I-1' },
        b: { type: 'boolean', 'x-mcp-header': "b_!#$%&'*+.^`|~" },
        deep: object({ z: { type: 'string', 'x-mcp-header': 'Zone' } }),
      }),
    ),
    undefined,
  );
});

test('a property named x-mcp-header, and the key inside data keywords, declare nothing', () => {
  assert.equal(headerDeclarationProblem(object({ 'x-mcp-header': { type: 'string' } })), undefined);
  assert.equal(
    headerDeclarationProblem(
      object({ a: { type: 'object', default: { 'x-mcp-header': 5 }, const: { 'x-mcp-header': null } } }),
    ),
    undefined,
  );
});

test('invalid: names that are not tokens, types that are not primitive, places off the static chain, repeats', () => {
  const cases: [unknown, RegExp][] = [
    [object({ a: { type: 'string', 'x-mcp-header': null } }), /null, not a string/],
    [object({ a: { type: 'string', 'x-mcp-header': 7 } }), /number, not a string/],
    [object({ a: { type: 'string', 'x-mcp-header': '' } }), /empty/],
    [object({ a: { type: 'string', 'x-mcp-header': 'a:b' } }), /token/],
    [object({ a: { type: 'string', 'x-mcp-header': 'é' } }), /token/],
    [object({ a: { 'x-mcp-header': 'NoType' } }), /type null/],
    [object({ a: { type: ['string', 'null'], 'x-mcp-header': 'Union' } }), /type \["string","null"\]/],
    [object({ a: { type: 'number', 'x-mcp-header': 'N' } }), /type "number"/],
    [object({ a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'I' } } }), /properties keys alone/],
    [object({ a: { anyOf: [{ type: 'string', 'x-mcp-header': 'I' }] } }), /properties keys alone/],
    [object({ a: { if: { type: 'string', 'x-mcp-header': 'I' } } }), /properties keys alone/],
    [object({}, { $defs: { d: { type: 'string', 'x-mcp-header': 'D' } } }), /properties keys alone/],
    [{ type: 'object', 'x-mcp-header': 'Root' }, /the schema root/],
    [
      object({
        a: { type: 'string', 'x-mcp-header': 'Dup' },
        b: object({ c: { type: 'string', 'x-mcp-header': 'dUP' } }),
      }),
      /repeats "Dup"/,
    ],
  ];
  for (const [schema, reason] of cases)
    assert.match(headerDeclarationProblem(schema) ?? 'valid', reason, JSON.stringify(schema));
});
