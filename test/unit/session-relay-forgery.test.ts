// Redis is trusted for availability only: whoever can write to it (or read it) is played here by a plain
// connection to the real Redis at 127.0.0.1:6379 (unique key prefix). A forged entry in the ended set does
// not end a session, a forged subscription entry is not applied, and an answer crossing Redis cannot be read.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { SessionRelay, type EndedSession, type SessionEvent } from '../../src/legacy-client/session-relay.js';
import { silentLog } from '../../infra/log.js';
import { scratchRedis } from '../e2e/own-redis.js';
import { sharedRedis } from '../services.js';
import { scaled } from '../timing.js';
import { retried } from '../timing.js';

const URL = 'redis://127.0.0.1:6379';
const redisNeed = await sharedRedis('the session relay forgery tests');
const SKIP = redisNeed.skip;
const SECRET = Buffer.from('session-relay-forgery-secret-0123456789');
const OTHER_SECRET = Buffer.from('not-this-deployments-secret-0123456789');

/**
 * The relays' Redis commands may take a few seconds (cache.commandTimeoutMs): what one replica publishes or
 * stores for another is under test, and a command dropped for taking 150 ms on a loaded machine would fail it
 * for nothing (the 150 ms default has its own test, redis-command-timeout).
 */
const COMMAND_TIMEOUT_MS = scaled(5_000);

function relay(keyPrefix: string, secret = SECRET) {
  const ended: EndedSession[] = [];
  const heard: { session: string; event: SessionEvent }[] = [];
  const instance = new SessionRelay({
    url: URL,
    keyPrefix,
    secret,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    log: silentLog,
  });
  instance.attach({
    event: (session, event) => heard.push({ session, event }),
    ended: (sessions) => ended.push(...sessions),
  });
  return { relay: instance, ended, heard };
}

function sessionsIn(ended: readonly EndedSession[]): string[] {
  return [...new Set(ended.map((e) => e.session))].sort();
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(check(), what);
}

describe('SessionRelay against someone who can write to Redis', { skip: SKIP }, () => {
  before(() => redisNeed.check());
  const { keyPrefix, redis } = scratchRedis();

  test('a forged ZADD or PUBLISH does not end a session; a genuine DELETE does', async () => {
    const prefix = `${keyPrefix}ended:`;
    const endedKey = `${prefix}sessions:ended`;
    const expiresAt = Date.now() + 60_000;
    const running = relay(prefix);
    const stranger = relay(prefix, OTHER_SECRET);
    let late: ReturnType<typeof relay> | undefined;
    try {
      // Ended by a gateway with another secret, then forged by hand: bare, with a made-up MAC, and a
      // genuine entry's MAC moved to another session.
      await retried(() => stranger.relay.end('victim-1', expiresAt));
      await retried(() => running.relay.end('genuine', expiresAt));
      const [genuine] = (await redis.zrange(endedKey, '0', '-1')).filter((member) => member.includes('.genuine.'));
      assert.ok(genuine, 'the genuine entry is in the set');
      const mac = genuine.slice(genuine.lastIndexOf('.') + 1);
      await redis.zadd(
        endedKey,
        expiresAt,
        'victim-2',
        expiresAt,
        `${expiresAt}.victim-3.AAAA`,
        expiresAt,
        `${expiresAt}.victim-4.${mac}`,
      );
      await redis.publish(`${prefix}sessions:ended`, `${expiresAt}.victim-5.${mac}`);
      await retried(() => running.relay.end('genuine-2', expiresAt));
      await until(
        () => running.ended.some((e) => e.session === 'genuine-2'),
        'the running relay heard the second genuine DELETE',
      );
      // At least once: a DELETE announced while the relay's first catch-up reads the set is heard twice.
      assert.deepEqual(sessionsIn(running.ended), ['genuine', 'genuine-2'], 'heard live: only what this secret signed');

      late = relay(prefix);
      const { ended } = late;
      await until(() => ended.length >= 2, 'a relay started afterwards read the ended set');
      assert.deepEqual(sessionsIn(ended), ['genuine', 'genuine-2'], 'read on catch-up: only what this secret signed');
    } finally {
      await Promise.all([running.relay.close(), stranger.relay.close(), late?.relay.close()]);
    }
  });

  test('a forged subscription entry is not applied', async () => {
    const prefix = `${keyPrefix}subscriptions:`;
    const expiresAt = Date.now() + 60_000;
    const a = relay(prefix);
    const stranger = relay(prefix, OTHER_SECRET);
    try {
      await retried(() => a.relay.addSubscription('victim', 'file:///genuine', expiresAt));
      await retried(() => a.relay.addSubscription('other', 'file:///other', expiresAt));
      await retried(() => stranger.relay.addSubscription('victim', 'file:///stranger', expiresAt));
      const [otherEntry] = await redis.smembers(`${prefix}session:other:subscriptions`);
      // Bare, with a made-up MAC, and another session's genuine entry copied over.
      await redis.sadd(`${prefix}session:victim:subscriptions`, 'file:///bare', 'AAAA.file:///made-up', otherEntry!);
      assert.deepEqual(await a.relay.subscriptions('victim'), ['file:///genuine']);
      assert.deepEqual(await a.relay.subscriptions('other'), ['file:///other']);
      await a.relay.removeSubscription('victim', 'file:///genuine');
      assert.deepEqual(await a.relay.subscriptions('victim'), [], 'removed by the same signed entry');
    } finally {
      await Promise.all([a.relay.close(), stranger.relay.close()]);
    }
  });

  test('an answer crossing Redis is unreadable there, and opens on the replica that asked', async () => {
    const prefix = `${keyPrefix}answers:`;
    const asking = relay(prefix);
    const answering = relay(prefix);
    const spy = new Redis(URL);
    try {
      const release = await retried(async () => {
        const release = await asking.relay.watch('s1');
        // The watch resolves even when the SUBSCRIBE could not be made yet: check someone listens.
        if ((await answering.relay.publish('s1', { kind: 'resync' })) === 0)
          throw (release(), new Error('not listening yet'));
        return release;
      });
      const seen: string[] = [];
      await spy.subscribe(`${prefix}session:s1`);
      spy.on('message', (_channel: string, text: string) => seen.push(text));
      const message = {
        jsonrpc: '2.0',
        id: 'mcp-gateway-q1',
        result: { action: 'accept', content: { password: 'hunter2-elicited' } },
      };
      // Sent again if Redis took longer than the relay waits (150 ms, by design) on a loaded machine: the spy may then
      // read it twice.
      assert.equal(
        await retried(() => answering.relay.publish('s1', { kind: 'answer', message })),
        2,
        'the asking relay and the spy',
      );
      await until(() => seen.length >= 1 && asking.heard.some((h) => h.event.kind === 'answer'), 'both heard it');
      assert.deepEqual(
        asking.heard.find((h) => h.event.kind === 'answer'),
        { session: 's1', event: { kind: 'answer', message } },
      );
      for (const text of ['hunter2-elicited', 'mcp-gateway-q1', 'accept'])
        assert.ok(!seen.some((crossed) => crossed.includes(text)), `"${text}" is not readable in Redis`);
      release();
    } finally {
      spy.disconnect();
      await Promise.all([asking.relay.close(), answering.relay.close()]);
    }
  });
});
