// The order the edge's request rules answer in when a request breaks more than one (streamable-http.mdx,
// "Server Validation", and the SDK v2 server's ladder): a header that disagrees with the body is -32020 even
// when the body names a version nobody supports; an unsupported version comes before a missing header.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkMessage, type Checked } from '../../src/edge/request-rules.js';

const PV = 'io.modelcontextprotocol/protocolVersion';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const VERSION = '2026-07-28';

function body(version: unknown, method = 'tools/list') {
  return { jsonrpc: '2.0', id: 1, method, params: { _meta: { [PV]: version, [CC]: {} } } };
}

function answer(checked: Checked): { status: number; code: number; message: string } {
  assert.equal(checked.kind, 'rejected', JSON.stringify(checked));
  const { rejection } = checked as Extract<Checked, { kind: 'rejected' }>;
  return { status: rejection.status, code: rejection.body.error.code, message: rejection.body.error.message };
}

describe('which rule answers first', () => {
  test('supported header, unsupported _meta version → 400 / -32020 (not -32022)', () => {
    const a = answer(
      checkMessage(
        body('2099-01-01'),
        new Headers({ 'MCP-Protocol-Version': VERSION, 'Mcp-Method': 'tools/list' }),
        undefined,
      ),
    );
    assert.deepEqual([a.status, a.code], [400, -32020]);
    assert.match(a.message, /MCP-Protocol-Version/);
  });

  test('supported header, a legacy _meta version → 400 / -32020', () => {
    const a = answer(
      checkMessage(
        body('2025-11-25'),
        new Headers({ 'MCP-Protocol-Version': VERSION, 'Mcp-Method': 'tools/list' }),
        undefined,
      ),
    );
    assert.deepEqual([a.status, a.code], [400, -32020]);
  });

  test('supported _meta version, another version in the header → 400 / -32020', () => {
    const a = answer(
      checkMessage(
        body(VERSION),
        new Headers({ 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' }),
        undefined,
      ),
    );
    assert.deepEqual([a.status, a.code], [400, -32020]);
  });

  test('Mcp-Method disagreeing, unsupported version that the header repeats → -32020', () => {
    const a = answer(
      checkMessage(
        body('2099-01-01'),
        new Headers({ 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'prompts/list' }),
        undefined,
      ),
    );
    assert.deepEqual([a.status, a.code], [400, -32020]);
    assert.match(a.message, /Mcp-Method/);
  });

  test('header and _meta agree on an unsupported version → 400 / -32022 with {supported, requested}', () => {
    const checked = checkMessage(
      body('2099-01-01'),
      new Headers({ 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' }),
      undefined,
    );
    const a = answer(checked);
    assert.deepEqual([a.status, a.code], [400, -32022]);
    const { rejection } = checked as Extract<Checked, { kind: 'rejected' }>;
    assert.deepEqual(rejection.body.error.data, { supported: [VERSION], requested: '2099-01-01' });
  });

  test('no headers at all and an unsupported version → -32022 (the version is the first thing wrong)', () => {
    const a = answer(checkMessage(body('2099-01-01'), new Headers(), undefined));
    assert.deepEqual([a.status, a.code], [400, -32022]);
  });

  test('no headers at all and a supported version → -32020', () => {
    const a = answer(checkMessage(body(VERSION), new Headers(), undefined));
    assert.deepEqual([a.status, a.code], [400, -32020]);
  });

  test('a header mismatch outranks an unknown method (404 comes after the headers)', () => {
    const a = answer(
      checkMessage(
        body('2099-01-01', 'no/such'),
        new Headers({ 'MCP-Protocol-Version': VERSION, 'Mcp-Method': 'no/such' }),
        undefined,
      ),
    );
    assert.deepEqual([a.status, a.code], [400, -32020]);
  });
});
