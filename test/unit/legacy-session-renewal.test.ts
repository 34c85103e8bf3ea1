// A 2025 HTTP server that forgets its session (HTTP 404) gets a new one; the resources the gateway's listen
// stream had subscribed on the old session are subscribed again on the new one, because that stream stays
// open (the upstream never left ready) and would tell the server nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LegacyDialect } from '../../bridge/legacy/legacy-dialect.js';
import { silentLog } from '../../infra/log.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';

const HANDSHAKE = {
  protocolVersion: '2025-06-18',
  capabilities: { resources: { subscribe: true } },
  serverInfo: { name: 'old', version: '1' },
  instructions: undefined,
};

function session() {
  const sent: JsonRpcRequest[] = [];
  const own = (request: JsonRpcRequest): Promise<JsonRpcResponse> => {
    sent.push(request);
    return Promise.resolve({ jsonrpc: '2.0', id: request.id, result: {} });
  };
  return { sent, dialect: new LegacyDialect(HANDSHAKE, 5_000, own, silentLog) };
}

test('the new session subscribes what the forgotten one had; the next listen diffs against it', () => {
  const old = session();
  const stream = new AbortController();
  void old.dialect.intercept(
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: { notifications: { resourceSubscriptions: ['a://1', 'a://2'] } },
    },
    { signal: stream.signal },
  );
  const renewed = session();
  renewed.dialect.carryOver(old.dialect);
  assert.deepEqual(
    renewed.sent.map((r) => [r.method, r.params?.uri]),
    [
      ['resources/subscribe', 'a://1'],
      ['resources/subscribe', 'a://2'],
    ],
  );
  renewed.sent.length = 0;
  void renewed.dialect.intercept(
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'subscriptions/listen',
      params: { notifications: { resourceSubscriptions: ['a://2'] } },
    },
    { signal: new AbortController().signal },
  );
  assert.deepEqual(
    renewed.sent.map((r) => [r.method, r.params?.uri]),
    [['resources/unsubscribe', 'a://1']],
  );
  stream.abort();
});
