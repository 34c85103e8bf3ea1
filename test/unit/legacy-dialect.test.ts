// The 2025 dialect: server/discover answered from the handshake, modern _meta left out of requests, and the
// gateway's subscriptions/listen played with resources/subscribe and resources/unsubscribe on the connection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LegacyDialect } from '../../bridge/legacy/legacy-dialect.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { silentLog } from '../../infra/log.js';

const HANDSHAKE = {
  protocolVersion: '2025-06-18',
  capabilities: { resources: { subscribe: true } },
  serverInfo: { name: 'old', version: '1' },
  instructions: undefined,
};

function dialect() {
  const sent: JsonRpcRequest[] = [];
  const own = (request: JsonRpcRequest): Promise<JsonRpcResponse> => {
    sent.push(request);
    return Promise.resolve({ jsonrpc: '2.0', id: request.id, result: {} });
  };
  return { sent, dialect: new LegacyDialect(HANDSHAKE, 5_000, own, silentLog) };
}

const listen = (id: number, uris: string[]): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'subscriptions/listen',
  params: { notifications: { toolsListChanged: true, resourceSubscriptions: uris } },
});

test('server/discover is answered from the handshake; requests lose the modern _meta keys', () => {
  const { dialect: legacy, sent } = dialect();
  const answer = legacy.intercept({ jsonrpc: '2.0', id: 7, method: 'server/discover' }, {}) as JsonRpcResponse;
  assert.ok('result' in answer);
  assert.equal(answer.id, 7);
  assert.deepEqual(answer.result.supportedVersions, ['2026-07-28']);
  assert.equal(answer.result.ttlMs, 5_000);
  assert.equal(legacy.intercept({ jsonrpc: '2.0', id: 8, method: 'tools/list' }, {}), undefined);
  const outgoing = legacy.outgoing({
    jsonrpc: '2.0',
    id: 9,
    method: 'tools/list',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
  });
  assert.deepEqual(outgoing.params, {});
  assert.deepEqual(sent, []);
});

test(
  'a listen stream subscribes the URIs it names, the next one only the difference; ' + 'each stays open until closed',
  async () => {
    const { dialect: legacy, sent } = dialect();
    const first = new AbortController();
    const open = legacy.intercept(listen(1, ['a://1', 'a://2']), { signal: first.signal }) as Promise<JsonRpcResponse>;
    assert.deepEqual(
      sent.map((r) => [r.method, r.params?.uri]),
      [
        ['resources/subscribe', 'a://1'],
        ['resources/subscribe', 'a://2'],
      ],
    );
    let ended = false;
    void open.then(() => (ended = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ended, false);
    first.abort();
    assert.ok('error' in (await open));

    sent.length = 0;
    const second = new AbortController();
    void legacy.intercept(listen(2, ['a://2', 'a://3']), { signal: second.signal });
    assert.deepEqual(
      sent.map((r) => [r.method, r.params?.uri]),
      [
        ['resources/subscribe', 'a://3'],
        ['resources/unsubscribe', 'a://1'],
      ],
    );
    assert.deepEqual(sent[0]!.params, { uri: 'a://3' });
    second.abort();
  },
);
