// A name whose owner's list failed when it was read again for it (no answer within aggregate.listDeadlineMs, an
// error) is not answered "Unknown tool": that would be a guess, and the caller would not try again. Seen under
// heavy load, where a connected caller's first call read their list as them and it took longer than the deadline.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Upstream } from '../../bridge/upstream.js';
import { silentLog } from '../../infra/log.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { Aggregator } from '../../src/aggregate/aggregator.js';

/** crm answers tools/list as `lists` says: in time, too late (past the 50 ms deadline), or with an error. */
function setup() {
  const state = { lists: 'in time' as 'in time' | 'late' | 'error' };
  const crm: Upstream = {
    name: 'crm',
    events: new EventEmitter(),
    status: () => ({ state: 'ready', era: 'modern', restarts: 0, lastError: undefined }),
    start: async () => {},
    close: async () => {},
    request: async (message: JsonRpcRequest): Promise<JsonRpcResponse> => {
      if (message.method === 'tools/call')
        return { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'ran' }] } };
      if (state.lists === 'error')
        return { jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'crm database is down' } };
      if (state.lists === 'late') await new Promise((resolve) => setTimeout(resolve, 500));
      return {
        jsonrpc: '2.0',
        id: message.id,
        result: { tools: [{ name: 'read', inputSchema: { type: 'object' } }], ttlMs: 0, cacheScope: 'public' },
      };
    },
  };
  const aggregator = new Aggregator({
    upstreams: new Map([['crm', crm]]),
    prefixes: new Map([['crm', 'crm']]),
    separator: '__',
    listDeadlineMs: 50,
    cursorSecret: undefined,
    log: silentLog,
  });
  return { aggregator, state };
}

const call = (name: string, id: number): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
});

test("a name looked for while its owner's list did not answer in time: try again, not 'Unknown tool'", async () => {
  const { aggregator, state } = setup();
  state.lists = 'late';
  const answer = await aggregator.request(call('crm__read', 1));
  assert.ok('error' in answer, JSON.stringify(answer));
  assert.equal(answer.error.code, -32603);
  assert.equal(
    answer.error.message,
    "Could not look this tool up: upstream 'crm' failed its tools/list when it was read again for it (no answer " +
      'within aggregate.listDeadlineMs (50 ms)); try again',
  );
});

test('an error from the list is named the same way; once the list answers, a name it lacks is unknown', async () => {
  const { aggregator, state } = setup();
  state.lists = 'error';
  const failed = await aggregator.request(call('crm__read', 1));
  assert.ok(
    'error' in failed && /failed its tools\/list .*\(crm database is down\); try again/.test(failed.error.message),
  );
  state.lists = 'in time';
  await aggregator.request({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
  const unknown = await aggregator.request(call('crm__nope', 3));
  assert.ok('error' in unknown, JSON.stringify(unknown));
  assert.match(unknown.error.message, /^Unknown tool: crm__nope; its prefix names upstream 'crm'/);
  assert.equal(unknown.error.code, -32602);
});
