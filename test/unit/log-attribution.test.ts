// Which caller a stdio log message goes to (PendingRequests.logMessage), and a 2025 connection's level
// (LegacyLogLevel): raised for a more verbose caller, never lowered, refused for a value that is no level.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LegacyLogLevel } from '../../bridge/legacy/legacy-log-level.js';
import { PendingRequests } from '../../bridge/pending-requests.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { silentLog } from '../../infra/log.js';

const LONG = { timeoutMs: 10_000 };
const log = (level: string): JsonRpcNotification => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level, data: level },
});

function call(id: string, logLevel?: string): JsonRpcRequest {
  const _meta: Record<string, unknown> = logLevel === undefined ? {} : { 'io.modelcontextprotocol/logLevel': logLevel };
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't', arguments: {}, _meta } };
}

function connection() {
  const sent: any[] = [];
  // Snapshots: the caller's object gets its own id back once sent.
  const pending = new PendingRequests((message) => sent.push(JSON.parse(JSON.stringify(message))));
  const heard = new Map<string, string[]>();
  const dispatch = (id: string, logLevel?: string) => {
    heard.set(id, []);
    return pending.dispatch(call(id, logLevel), {
      ...LONG,
      onNotification: (n) => heard.get(id)!.push(String(n.params?.level)),
    });
  };
  return { pending, sent, heard, dispatch };
}

test('a modern connection: the one request that asked gets the message, also beside requests that did not', () => {
  const { pending, heard, dispatch } = connection();
  void dispatch('quiet');
  void dispatch('loud', 'debug');
  assert.equal(pending.logMessage(log('info'), false), true);
  assert.deepEqual(heard.get('loud'), ['info']);
  assert.deepEqual(heard.get('quiet'), []);
});

test("two requests that asked: nobody gets it (it could be either one's)", () => {
  const { pending, heard, dispatch } = connection();
  void dispatch('a', 'debug');
  void dispatch('b', 'debug');
  assert.equal(pending.logMessage(log('info'), false), false);
  assert.deepEqual([...heard.values()], [[], []]);
});

test('a 2025 connection logs for anyone: only a request alone in flight gets it', async () => {
  const { pending, sent, heard, dispatch } = connection();
  const loud = dispatch('loud', 'debug');
  void dispatch('quiet');
  assert.equal(pending.logMessage(log('info'), true), false, 'the quiet request may be the one logging');
  pending.answer({ jsonrpc: '2.0', id: sent[1].id, result: {} });
  assert.equal(pending.logMessage(log('warning'), true), true);
  assert.deepEqual(heard.get('loud'), ['warning']);
  pending.answer({ jsonrpc: '2.0', id: sent[0].id, result: {} });
  await loud;
  assert.equal(pending.logMessage(log('error'), true), false, 'nobody in flight');
});

test('LegacyLogLevel: setLevel only when a caller asks for more than the connection has', async () => {
  const levels: string[] = [];
  const ok = async (request: JsonRpcRequest): Promise<JsonRpcResponse> => {
    levels.push(String(request.params?.level));
    return { jsonrpc: '2.0', id: request.id, result: {} };
  };
  const level = new LegacyLogLevel(true, ok, silentLog);
  for (const asked of ['warning', 'error', 'warning', 'debug', 'info'])
    assert.equal(await level.prepare(call('x', asked)), undefined);
  assert.deepEqual(levels, ['warning', 'debug']);
  const refusal = await level.prepare(call('bad', 'loud'));
  assert.equal(refusal && 'error' in refusal ? refusal.error.code : undefined, -32602);
  assert.equal(refusal?.id, 'bad');
  // A server that did not declare logging is never sent setLevel (its messages are still filtered per request).
  const silent: string[] = [];
  await new LegacyLogLevel(
    false,
    async (r) => (silent.push(r.method), { jsonrpc: '2.0', id: r.id, result: {} }),
    silentLog,
  ).prepare(call('x', 'debug'));
  assert.deepEqual(silent, []);
});
