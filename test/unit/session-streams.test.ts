// A replica keeps a 2025 session's resource subscriptions only while it has a reason to: with Redis, while
// it holds the session's GET stream (the shared set has them for any other); without Redis, until the
// session would have expired. Sessions that simply go away leave nothing behind.
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { test } from 'node:test';
import { SessionStreams } from '../../src/legacy-client/session-streams.js';
import type { LegacySession } from '../../src/legacy-client/session-token.js';
import { silentLog } from '../../infra/log.js';

function session(id: string, expiresAt = Date.now() + 60_000): LegacySession {
  return {
    id,
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: undefined,
    endpoint: 'mcp',
    caller: 'anonymous',
    expiresAt,
  };
}

const subscribe = (uri: string) => ({ jsonrpc: '2.0' as const, id: 1, method: 'resources/subscribe', params: { uri } });

/** A stand-in listen hub recording what each stream was subscribed to. */
function hub() {
  const subscribed: string[] = [];
  return {
    subscribed,
    openLegacy: () => ({ subscribe: (uri: string) => (subscribed.push(uri), true), unsubscribe: () => {} }),
  };
}

/** A relay that works and records nothing: Redis keeps the shared set. */
const relay = {
  watch: async () => () => {},
  publish: async () => 0,
  addSubscription: async () => {},
  removeSubscription: async () => {},
  subscriptions: async () => [],
};

test('with Redis: a subscribe reaching a replica without the stream is not kept there', async () => {
  const streams = new SessionStreams(hub(), relay, silentLog);
  for (let i = 0; i < 100; i++)
    assert.deepEqual(await streams.subscribe(session(`s${i}`), subscribe('file:///a')), {
      jsonrpc: '2.0',
      id: 1,
      result: {},
    });
  assert.equal(streams.sessionsKept, 0);
});

test('with Redis: kept while the stream is here, forgotten when it closes', async () => {
  const listen = hub();
  const streams = new SessionStreams(listen, relay, silentLog);
  const outgoing = new ServerResponse(new IncomingMessage(new Socket()));
  streams.open(session('s1'), outgoing, undefined, undefined);
  await streams.subscribe(session('s1'), subscribe('file:///a'));
  assert.deepEqual(listen.subscribed, ['file:///a'], 'the stream here carries it');
  assert.equal(streams.sessionsKept, 1);
  outgoing.emit('close');
  assert.equal(streams.sessionsKept, 0);
});

test('without Redis: kept for a stream opened later, and forgotten once the session has expired', async () => {
  const listen = hub();
  const streams = new SessionStreams(listen, undefined, silentLog);
  await streams.subscribe(session('early'), subscribe('file:///a'));
  streams.open(session('early'), new ServerResponse(new IncomingMessage(new Socket())), undefined, undefined);
  assert.deepEqual(listen.subscribed, ['file:///a'], 'a subscription made before the GET applies to its stream');
  // Sessions that subscribed and then simply expired: swept as more arrive, not kept forever.
  for (let i = 0; i < 5_000; i++) await streams.subscribe(session(`gone${i}`, Date.now() - 1), subscribe('file:///a'));
  assert.ok(streams.sessionsKept <= 1_024, `${streams.sessionsKept} sessions kept`);
});
