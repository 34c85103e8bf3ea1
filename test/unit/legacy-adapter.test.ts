import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  discoverResult,
  initializeParams,
  parseInitializeResult,
  toLegacyParams,
  toLegacyRequest,
  toModernResponse,
  type LegacyHandshake,
} from '../../bridge/legacy/legacy-adapter.js';
import { mcpSchema, schemaDef } from '../schema.js';
import type { JsonRpcFailure, JsonRpcResponse, JsonRpcSuccess } from '../../protocol/jsonrpc.js';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const PV = 'io.modelcontextprotocol/protocolVersion';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const CI = 'io.modelcontextprotocol/clientInfo';
const LOG = 'io.modelcontextprotocol/logLevel';

assert.equal(mcpSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
function validator(def: string) {
  const validate = schemaDef(def);
  return (value: unknown) => {
    const ok = validate(value);
    assert.ok(ok, `${def}: ${JSON.stringify(validate.errors)}`);
  };
}

const handshake: LegacyHandshake = {
  protocolVersion: '2025-06-18',
  capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {} },
  serverInfo: { name: 'legacy-srv', version: '1.2.3' },
  instructions: 'Use the tools wisely.',
};
const options = { ttlMs: 0 };
const ok = (result: Record<string, unknown>): JsonRpcSuccess => ({ jsonrpc: '2.0', id: 1, result });

test('toModernResponse adds resultType "complete" when missing', () => {
  const r = ok({ content: [] });
  toModernResponse('tools/call', r, handshake, options);
  assert.equal(r.result.resultType, 'complete');
});

test('toModernResponse leaves an existing resultType untouched', () => {
  const r = ok({ resultType: 'input_required', inputRequests: {} });
  toModernResponse('tools/call', r, handshake, options);
  assert.equal(r.result.resultType, 'input_required');
});

test('ttlMs and cacheScope are added for a cacheable method (tools/list)', () => {
  const r = ok({ tools: [] });
  toModernResponse('tools/list', r, handshake, { ttlMs: 1234 });
  assert.equal(r.result.ttlMs, 1234);
  assert.equal(r.result.cacheScope, 'private');
});

test('ttlMs and cacheScope are added for every cacheable method', () => {
  for (const method of [
    'server/discover',
    'prompts/list',
    'resources/list',
    'resources/templates/list',
    'resources/read',
  ]) {
    const r = ok({});
    toModernResponse(method, r, handshake, options);
    assert.equal(r.result.ttlMs, 0, method);
    assert.equal(r.result.cacheScope, 'private', method);
  }
});

test(
  'ttlMs and cacheScope are NOT added for a non-cacheable method (tools/call, ' + 'prompts/get, completion/complete)',
  () => {
    for (const method of ['tools/call', 'prompts/get', 'completion/complete']) {
      const r = ok({ content: [] });
      toModernResponse(method, r, handshake, options);
      assert.equal('ttlMs' in r.result, false, method);
      assert.equal('cacheScope' in r.result, false, method);
    }
  },
);

test('values the server sent are kept (ttlMs, cacheScope, unknown fields)', () => {
  const r = ok({
    tools: [{ name: 't', inputSchema: { type: 'object' } }],
    ttlMs: 60_000,
    cacheScope: 'public',
    vendorExtra: { x: 1 },
    nextCursor: 'c2',
  });
  toModernResponse('tools/list', r, handshake, { ttlMs: 5 });
  assert.equal(r.result.ttlMs, 60_000);
  assert.equal(r.result.cacheScope, 'public');
  assert.deepEqual(r.result.vendorExtra, { x: 1 });
  assert.equal(r.result.nextCursor, 'c2');
  assert.deepEqual(r.result.tools, [{ name: 't', inputSchema: { type: 'object' } }]);
});

test('_meta serverInfo is added, other _meta keys kept, an existing serverInfo kept', () => {
  const r1 = ok({});
  toModernResponse('tools/call', r1, handshake, options);
  assert.deepEqual((r1.result._meta as any)[SERVER_INFO], { name: 'legacy-srv', version: '1.2.3' });

  const r2 = ok({ _meta: { 'com.example/trace': 'abc' } });
  toModernResponse('tools/call', r2, handshake, options);
  assert.equal((r2.result._meta as any)['com.example/trace'], 'abc');
  assert.deepEqual((r2.result._meta as any)[SERVER_INFO], handshake.serverInfo);

  const r3 = ok({ _meta: { [SERVER_INFO]: { name: 'self', version: '9' } } });
  toModernResponse('tools/call', r3, handshake, options);
  assert.deepEqual((r3.result._meta as any)[SERVER_INFO], { name: 'self', version: '9' });
});

test('an adapted legacy tools/list result validates against ListToolsResult', () => {
  const r = ok({
    tools: [
      { name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: { m: { type: 'string' } } } },
    ],
  });
  toModernResponse('tools/list', r, handshake, options);
  validator('ListToolsResult')(r.result);
});

test('error -32002 (legacy resource not found) becomes -32602; message and data kept', () => {
  const r: JsonRpcFailure = {
    jsonrpc: '2.0',
    id: 3,
    error: { code: -32002, message: 'Resource not found', data: { uri: 'file:///x' } },
  };
  toModernResponse('resources/read', r, handshake, options);
  assert.deepEqual(r.error, { code: -32602, message: 'Resource not found', data: { uri: 'file:///x' } });
  assert.equal('result' in r, false);
});

test('other error codes pass unchanged', () => {
  const r: JsonRpcFailure = { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'nope' } };
  toModernResponse('tools/call', r, handshake, options);
  assert.deepEqual(r.error, { code: -32601, message: 'nope' });
});

test('toLegacyParams strips the three modern _meta keys but keeps progressToken and other keys', () => {
  const params = {
    name: 't',
    arguments: { a: 1 },
    _meta: { [PV]: '2026-07-28', [CC]: {}, [CI]: { name: 'c', version: '1' }, progressToken: 'p1', 'com.example/x': 1 },
  };
  toLegacyParams(params);
  assert.deepEqual(params, { name: 't', arguments: { a: 1 }, _meta: { progressToken: 'p1', 'com.example/x': 1 } });
});

test('toLegacyParams removes _meta entirely when nothing else is left', () => {
  const params: Record<string, unknown> = { name: 't', _meta: { [PV]: '2026-07-28', [CC]: {} } };
  toLegacyParams(params);
  assert.deepEqual(params, { name: 't' });
});

test('toLegacyParams tolerates undefined params and params without _meta', () => {
  toLegacyParams(undefined);
  const params = { name: 't' };
  toLegacyParams(params);
  assert.deepEqual(params, { name: 't' });
});

test('toLegacyParams also strips io.modelcontextprotocol/logLevel (a modern-only per-request key)', () => {
  const params: Record<string, unknown> = { _meta: { [PV]: '2026-07-28', [CC]: {}, [LOG]: 'debug' } };
  toLegacyParams(params);
  assert.deepEqual(params, {});
});

test('discoverResult validates against the DiscoverResult schema', () => {
  const result = discoverResult(handshake, { ttlMs: 30_000 });
  validator('DiscoverResult')(result);
  assert.equal(result.resultType, 'complete');
  assert.deepEqual(result.supportedVersions, ['2026-07-28']);
  assert.deepEqual(result.capabilities, handshake.capabilities);
  assert.equal(result.ttlMs, 30_000);
  assert.equal(result.cacheScope, 'private');
  assert.equal(result.instructions, 'Use the tools wisely.');
  assert.deepEqual((result._meta as any)[SERVER_INFO], handshake.serverInfo);
});

test('the schema check is live: a DiscoverResult missing ttlMs or with a bad cacheScope is refused', () => {
  const validate = schemaDef('DiscoverResult');
  const { ttlMs: _t, ...noTtl } = discoverResult(handshake, options);
  assert.equal(validate(noTtl), false);
  assert.equal(validate({ ...discoverResult(handshake, options), cacheScope: 'shared' }), false);
});

test('discoverResult without instructions omits the key and still validates', () => {
  const result = discoverResult({ ...handshake, instructions: undefined }, options);
  assert.equal('instructions' in result, false);
  validator('DiscoverResult')(result);
});

test('discoverResult wrapped in a response validates against DiscoverResultResponse', () => {
  validator('DiscoverResultResponse')({ jsonrpc: '2.0', id: 'd1', result: discoverResult(handshake, options) });
});

test('initializeParams offers the newest legacy version', () => {
  assert.deepEqual(initializeParams({ name: 'gw', version: '0.1.0' }), {
    protocolVersion: '2025-11-25',
    capabilities: { roots: {}, sampling: {}, elicitation: {} },
    clientInfo: { name: 'gw', version: '0.1.0' },
  });
});

test('parseInitializeResult reads a legacy answer and fills gaps', () => {
  const h = parseInitializeResult({
    protocolVersion: '2025-03-26',
    capabilities: { prompts: {} },
    serverInfo: { name: 's', version: '2', title: 'S' },
  });
  assert.equal(h.protocolVersion, '2025-03-26');
  assert.deepEqual(h.capabilities, { prompts: {} });
  assert.deepEqual(h.serverInfo, { name: 's', version: '2', title: 'S' });
  assert.equal(h.instructions, undefined);
  const bare = parseInitializeResult({ protocolVersion: '2024-11-05' });
  assert.deepEqual(bare.serverInfo, { name: 'unknown', version: '0' });
  assert.deepEqual(bare.capabilities, {});
});

test('parseInitializeResult rejects an unknown protocolVersion with a helpful message', () => {
  assert.throws(
    () =>
      parseInitializeResult({
        protocolVersion: '1999-01-01',
        capabilities: {},
        serverInfo: { name: 's', version: '1' },
      }),
    (error: Error) => {
      assert.match(error.message, /"1999-01-01"/);
      assert.match(error.message, /2025-11-25/); // names what it does speak
      assert.match(error.message, /2024-11-05/);
      return true;
    },
  );
  assert.throws(() => parseInitializeResult({ protocolVersion: '2026-07-28' }), /"2026-07-28"/);
  assert.throws(() => parseInitializeResult({ capabilities: {} }), /protocolVersion undefined/);
});

test('parseInitializeResult rejects a non-object result', () => {
  assert.throws(() => parseInitializeResult(null), /result object/);
  assert.throws(() => parseInitializeResult('2025-06-18'), /result object/);
});

test("toLegacyRequest leaves out the modern _meta keys without touching the caller's message", () => {
  const message = {
    jsonrpc: '2.0' as const,
    id: 1,
    method: 'tools/call',
    params: {
      name: 'x',
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        progressToken: 3,
      },
    },
  };
  const before = structuredClone(message);
  const legacy = toLegacyRequest(message);
  assert.deepEqual(legacy.params, { name: 'x', _meta: { progressToken: 3 } });
  assert.deepEqual(message, before);
  const bare = {
    jsonrpc: '2.0' as const,
    id: 2,
    method: 'tools/list',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
  };
  assert.deepEqual(toLegacyRequest(bare).params, {});
  const plain = { jsonrpc: '2.0' as const, id: 3, method: 'tools/list', params: { _meta: { progressToken: 1 } } };
  assert.equal(toLegacyRequest(plain), plain, 'nothing to drop: the same object, no copy');
});

test('toModernResponse passes a malformed error (null) through instead of throwing', () => {
  const response = { jsonrpc: '2.0', id: 1, error: null } as unknown as JsonRpcResponse;
  assert.doesNotThrow(() => toModernResponse('tools/call', response, handshake, { ttlMs: 0 }));
});
