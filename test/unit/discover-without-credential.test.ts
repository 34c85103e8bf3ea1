// server/discover never needs a caller's credential (issue 46 item 1): the secrets gate answers a caller yet
// to paste their values with the gateway's stand-in (tools advertised), while their other requests get the
// connect answer; /mcp's merged discover then advertises tools from that stand-in.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Upstream } from '../../bridge/upstream.js';
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { SecretGate } from '../../src/layers/per-caller/secret-gate.js';
import { isPlaceholderDiscover } from '../../src/aggregate/connect-placeholder.js';
import { mergeDiscover } from '../../src/aggregate/merged-discover.js';

const reached: string[] = [];
const inner: Upstream = {
  name: 'notes',
  events: new EventEmitter(),
  status: () => ({ state: 'ready', era: 'modern', restarts: 0, lastError: undefined }),
  start: async () => {},
  close: async () => {},
  request: async (message: JsonRpcRequest): Promise<JsonRpcResponse> => {
    reached.push(message.method);
    return { jsonrpc: '2.0', id: message.id, result: {} };
  },
};
const connectAnswer = (id: JsonRpcId): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32042, message: 'connect first', data: { url: 'http://gw/secrets/x' } },
});
const gate = new SecretGate(inner, { requestState: 'secrets:notes', before: async () => connectAnswer });

test('a caller without their values: discover answers tools advertised, a call answers the connect link', async () => {
  const discover = await gate.request(
    { jsonrpc: '2.0', id: 1, method: 'server/discover' },
    { caller: { principal: 'ann' } },
  );
  assert.ok('result' in discover, JSON.stringify(discover));
  assert.deepEqual(discover.result.capabilities, { tools: { listChanged: true } });
  assert.ok(isPlaceholderDiscover(discover.result));
  assert.equal(discover.result.cacheScope, 'private');
  const call = await gate.request(
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read', arguments: {} } },
    { caller: { principal: 'ann' } },
  );
  assert.ok('error' in call && call.error.code === -32042);
  assert.deepEqual(reached, [], 'nothing reached the server');
  const merged = mergeDiscover([{ server: 'notes', response: discover }], '__', undefined);
  assert.deepEqual(merged.capabilities, { tools: { listChanged: true } });
});
