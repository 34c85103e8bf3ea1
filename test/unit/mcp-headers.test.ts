import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendModernHeaders, encodeHeaderValue } from '../../bridge/http/mcp-headers.js';
import { decodeHeaderValue } from '../../src/edge/header-value.js';

test("the spec's encoding examples", () => {
  assert.equal(encodeHeaderValue('us-west1'), 'us-west1');
  assert.equal(encodeHeaderValue('Hello, 世界'), '=?base64?SGVsbG8sIOS4lueVjA==?=');
  assert.equal(encodeHeaderValue(' padded '), '=?base64?IHBhZGRlZCA=?=');
  assert.equal(encodeHeaderValue('line1\nline2'), '=?base64?bGluZTEKbGluZTI=?=');
  assert.equal(encodeHeaderValue('=?base64?literal?='), '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
});

test('inner spaces stay plain; tabs, controls and edge whitespace are encoded; every value decodes back', () => {
  for (const value of [
    'get weather',
    'a\tb',
    'x ',
    '\ty',
    'ctl\u0001',
    'file:///tmp/a b.txt',
    'grüße',
    '😀',
    '=?base64?x',
    '',
  ]) {
    const encoded = encodeHeaderValue(value);
    assert.equal(decodeHeaderValue(encoded), value, JSON.stringify(value));
    assert.match(encoded, /^[\x20-\x7e]*$/);
  }
  assert.equal(encodeHeaderValue('get weather'), 'get weather');
});

test('modern headers: version from _meta, method, name by method, and only Mcp-Param-* forwarded', () => {
  const call = {
    jsonrpc: '2.0' as const,
    id: 1,
    method: 'tools/call',
    params: { name: 'grüße', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
  };
  const headers = appendModernHeaders(['content-type', 'application/json'], call, {
    'mcp-param-region': 'eu',
    cookie: 'secret',
  });
  assert.deepEqual(headers, [
    'content-type',
    'application/json',
    'mcp-protocol-version',
    '2026-07-28',
    'mcp-method',
    'tools/call',
    'mcp-name',
    '=?base64?Z3LDvMOfZQ==?=',
    'mcp-param-region',
    'eu',
  ]);
  const read = { jsonrpc: '2.0' as const, id: 2, method: 'resources/read', params: { uri: 'fixture://hello' } };
  assert.deepEqual(appendModernHeaders([], read, undefined).slice(4), ['mcp-name', 'fixture://hello']);
  const list = { jsonrpc: '2.0' as const, id: 3, method: 'tools/list', params: { name: 'not a name header' } };
  assert.equal(appendModernHeaders([], list, undefined).length, 4);
});
