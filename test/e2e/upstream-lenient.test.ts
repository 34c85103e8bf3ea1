// What an upstream writes is read liberally: a message whose "params" is null (Rust's json! with None writes
// that; PHP writes [] for none) counts as having no params instead of being dropped, so a list change it
// announces is still heard.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { parseMessage, parseUpstreamMessage } from '../../protocol/jsonrpc.js';
import { post, request, ROOT, startTestGateway, until } from './harness.js';

let gateway: RunningGateway | undefined;
after(() => gateway?.close());

test('parseUpstreamMessage reads null or [] params as absent; parseMessage, for clients, stays strict', () => {
  const notification = { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: null };
  assert.equal(parseMessage(notification).kind, 'invalid');
  assert.deepEqual(parseUpstreamMessage(notification), {
    kind: 'notification',
    message: { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
  });
  const ask = { jsonrpc: '2.0', id: 7, method: 'roots/list', params: [] };
  assert.deepEqual(parseUpstreamMessage(ask), {
    kind: 'request',
    message: { jsonrpc: '2.0', id: 7, method: 'roots/list' },
  });
  const answer = { jsonrpc: '2.0', id: 7, result: {} };
  assert.equal(parseUpstreamMessage(answer).message, answer, 'a well-formed message is not copied');
});

test('a stdio server announcing a list change with "params": null is heard', async () => {
  gateway = await startTestGateway({
    faulty: { command: process.execPath, args: ['test/fixtures/faulty-server.mjs'], cwd: ROOT },
  });
  const upstream = gateway.upstreams.get('faulty')!;
  let heard = 0;
  upstream.events.on('listChanged', (notification: { method: string }) => {
    if (notification.method === 'notifications/tools/list_changed') heard++;
  });
  const answer = await post(
    `${gateway.url}/servers/faulty/mcp`,
    request('tools/call', { name: 'null-params', arguments: { text: 'done' } }),
  );
  assert.equal(answer.body.result.content[0].text, 'done');
  assert.ok(await until(async () => heard === 1, 2_000), 'the list change was dropped');
});
