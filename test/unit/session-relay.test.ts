// The Redis side of 2025 sessions across replicas, against the real Redis at 127.0.0.1:6379 (unique key
// prefix): what one replica publishes for a session reaches the one watching it, and nothing forged does;
// subscriptions live as long as the session; ended sessions reach replicas that start later, whichever of
// their two connections is ready first, and in one batch however many there are.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { SessionRelay, type EndedSession, type SessionEvent } from '../../src/legacy-client/session-relay.js';
import { silentLog } from '../../infra/log.js';
import { scratchRedis } from '../e2e/own-redis.js';
import { unusedPort } from '../ports.js';
import { sharedRedis } from '../services.js';
import { scaled } from '../timing.js';
import { redisProxy } from './redis-proxy.js';

const URL = 'redis://127.0.0.1:6379';
const redisNeed = await sharedRedis('the session relay tests');
const SKIP = redisNeed.skip;
const SECRET = Buffer.from('session-relay-unit-secret-0123456789');

/**
 * The relays' Redis commands may take a few seconds (cache.commandTimeoutMs): what one replica publishes or
 * stores for another is under test, and a command dropped for taking 150 ms on a loaded machine would fail it
 * for nothing (the 150 ms default has its own test, redis-command-timeout).
 */
const COMMAND_TIMEOUT_MS = scaled(5_000);

/** A relay and what its handlers heard, with a way to wait for the next thing heard. */
function replica(keyPrefix: string, secret = SECRET, url = URL) {
  const heard: { session: string; event: SessionEvent }[] = [];
  const ended: EndedSession[] = [];
  /** How many times `ended` was called (a catch-up hands over every ended session at once). */
  let endedCalls = 0;
  let wake: (() => void) | undefined;
  const relay = new SessionRelay({ url, keyPrefix, secret, commandTimeoutMs: COMMAND_TIMEOUT_MS, log: silentLog });
  relay.attach({
    event: (session, event) => (heard.push({ session, event }), wake?.()),
    ended: (sessions) => (endedCalls++, ended.push(...sessions), wake?.()),
  });
  const next = (count: () => number, want: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what}: heard ${count()}, wanted ${want}`)), scaled(10_000));
      const check = () => count() >= want && (clearTimeout(timer), (wake = undefined), resolve());
      wake = check;
      check();
    });
  return {
    relay,
    heard,
    ended,
    next,
    get endedCalls() {
      return endedCalls;
    },
  };
}

async function ready(relay: SessionRelay): Promise<void> {
  // A watch resolves once Redis confirmed the SUBSCRIBE; the first may race the connection, so retry it.
  for (let i = 0; i < 100; i++) {
    const release = await relay.watch('warm-up');
    release();
    if ((await relay.publish('warm-up', { kind: 'resync' }).catch(() => -1)) >= 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('Redis did not become ready');
}

describe('SessionRelay', { skip: SKIP }, () => {
  before(() => redisNeed.check());
  const { keyPrefix, redis } = scratchRedis();

  test(
    'an answer published on one replica reaches the one watching the session; ' + 'forged or moved messages do not',
    async () => {
      const a = replica(keyPrefix);
      const b = replica(keyPrefix);
      const stranger = replica(keyPrefix, Buffer.from('another-secret-altogether-0123456789'));
      try {
        await Promise.all([ready(a.relay), ready(b.relay), ready(stranger.relay)]);
        const release = await a.relay.watch('s1');
        // Forged: unsigned, signed with another secret, and a genuine message for another session moved onto s1's
        // channel.
        await redis.publish(
          `${keyPrefix}session:s1`,
          `AAAA.${JSON.stringify({ kind: 'answer', message: { id: 'forged', result: {} } })}`,
        );
        assert.equal(
          await stranger.relay.publish('s1', { kind: 'answer', message: { id: 'stranger', result: {} } }),
          1,
          'A listens (and ignores it)',
        );
        const moved = await new Promise<string>((resolve) => {
          const spy = new Redis(URL);
          void spy
            .subscribe(`${keyPrefix}session:s2`)
            .then(() => b.relay.publish('s2', { kind: 'answer', message: { id: 'moved', result: {} } }));
          spy.on('message', (_channel, text: string) => (spy.disconnect(), resolve(text)));
        });
        await redis.publish(`${keyPrefix}session:s1`, moved);
        assert.equal(
          await b.relay.publish('s1', { kind: 'answer', message: { id: 'genuine', result: { ok: true } } }),
          1,
        );
        await a.next(() => a.heard.filter((h) => h.session === 's1').length, 1, 'the genuine answer');
        assert.deepEqual(
          a.heard.filter((h) => h.session === 's1'),
          [{ session: 's1', event: { kind: 'answer', message: { id: 'genuine', result: { ok: true } } } }],
        );

        release();
        // Nobody watches any more once UNSUBSCRIBE went through: publish says so by counting no receivers.
        assert.ok(
          await untilZero(() => b.relay.publish('s1', { kind: 'resync' })),
          'no receiver after the watch was released',
        );
      } finally {
        await Promise.all([a.relay.close(), b.relay.close(), stranger.relay.close()]);
      }
    },
  );

  test(
    'subscriptions live as long as the session; an ended session reaches replicas watching and those that start ' +
      'later',
    async () => {
      const a = replica(keyPrefix);
      try {
        await ready(a.relay);
        const expiresAt = Date.now() + 60_000;
        await a.relay.addSubscription('s3', 'file:///a', expiresAt);
        await a.relay.addSubscription('s3', 'file:///b', expiresAt);
        await a.relay.removeSubscription('s3', 'file:///a');
        assert.deepEqual(await a.relay.subscriptions('s3'), ['file:///b']);
        const pttl = await redis.pttl(`${keyPrefix}session:s3:subscriptions`);
        assert.ok(pttl > 50_000 && pttl <= 60_000, `the set expires with the session (pttl ${pttl})`);

        const b = replica(keyPrefix);
        try {
          await ready(b.relay);
          await a.relay.end('s3', expiresAt);
          await b.next(() => b.ended.length, 1, 'the end heard by a running replica');
          // (Heard once, or twice if B's first read of the ended set ran after the DELETE.)
          for (const end of b.ended) assert.deepEqual(end, { session: 's3', expiresAt });
          assert.deepEqual(await a.relay.subscriptions('s3'), [], 'its subscriptions are forgotten');
        } finally {
          await b.relay.close();
        }
        const late = replica(keyPrefix);
        try {
          await late.next(() => late.ended.length, 1, 'the end read by a replica that started afterwards');
          assert.deepEqual(late.ended, [{ session: 's3', expiresAt }]);
        } finally {
          await late.relay.close();
        }
      } finally {
        await a.relay.close();
      }
    },
  );

  test(
    'a replica whose command connection is ready only after its subscriber still learns of the sessions ended ' +
      'before it started',
    async () => {
      const prefix = `${keyPrefix}late-client:`;
      const a = replica(prefix);
      const proxy = await redisProxy({ name: 'mcp-gateway-sessions', hold: true });
      let late: ReturnType<typeof replica> | undefined;
      try {
        await ready(a.relay);
        const expiresAt = Date.now() + 60_000;
        await a.relay.end('gone', expiresAt);
        // Only the subscriber's ready check (INFO) gets through: once it is answered the subscriber is ready,
        // and the other connection, released only now, needs two more round trips (its handshake, then INFO).
        const subscriberReady = proxy.replied('redis_version');
        late = replica(prefix, SECRET, proxy.url);
        await subscriberReady;
        proxy.release();
        const { ended } = late;
        await late.next(() => ended.length, 1, 'the end read once the command connection was ready');
        assert.deepEqual(ended, [{ session: 'gone', expiresAt }]);
      } finally {
        await Promise.all([a.relay.close(), late?.relay.close(), proxy.close()]);
      }
    },
  );

  test('a catch-up that fails is tried again', async () => {
    const prefix = `${keyPrefix}retry:`;
    const a = replica(prefix);
    const proxy = await redisProxy({ name: 'mcp-gateway-sessions', refuseOnce: 'zrangebyscore' });
    let late: ReturnType<typeof replica> | undefined;
    try {
      await ready(a.relay);
      const expiresAt = Date.now() + 60_000;
      await a.relay.end('gone', expiresAt);
      late = replica(prefix, SECRET, proxy.url);
      const { ended } = late;
      await late.next(() => ended.length, 1, 'the end read by the second try');
      assert.deepEqual(ended, [{ session: 'gone', expiresAt }]);
      assert.equal(proxy.refused, 1, 'the first read of the ended set failed');
    } finally {
      await Promise.all([a.relay.close(), late?.relay.close(), proxy.close()]);
    }
  });

  test('each of 40 replicas started after a DELETE learns of it', async () => {
    const prefix = `${keyPrefix}many-replicas:`;
    const a = replica(prefix);
    const started: ReturnType<typeof replica>[] = [];
    try {
      await ready(a.relay);
      const expiresAt = Date.now() + 60_000;
      await a.relay.end('gone', expiresAt);
      for (let i = 0; i < 40; i++) started.push(replica(prefix));
      await Promise.all(
        started.map((r) => r.next(() => r.ended.length, 1, 'the end read by a replica started afterwards')),
      );
      for (const r of started) assert.deepEqual(r.ended, [{ session: 'gone', expiresAt }]);
    } finally {
      await Promise.all([a.relay.close(), ...started.map((r) => r.relay.close())]);
    }
  });

  test('a replica catching up on 20,000 ended sessions is handed them in one batch', { timeout: 120_000 }, async () => {
    const prefix = `${keyPrefix}many-ended:`;
    const a = replica(prefix);
    let late: ReturnType<typeof replica> | undefined;
    try {
      await ready(a.relay);
      const expiresAt = Date.now() + 120_000;
      // (A busy machine can make a command outlast the fail-fast timeout: such a DELETE is sent again.)
      const end = async (session: string): Promise<void> => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await a.relay.end(session, expiresAt);
          } catch (error) {
            if (attempt >= 20) throw error;
          }
        }
      };
      for (let i = 0; i < 20_000; i += 25) await Promise.all(Array.from({ length: 25 }, (_, j) => end(`s${i + j}`)));
      late = replica(prefix);
      const { ended } = late;
      await late.next(() => ended.length, 20_000, 'every ended session read');
      assert.equal(late.endedCalls, 1, 'one call, so the receiver sweeps its map once, not once per session');
      assert.equal(new Set(ended.map((e) => e.session)).size, 20_000);
    } finally {
      await Promise.all([a.relay.close(), late?.relay.close()]);
    }
  });
});

test('with Redis unreachable, publishing fails at once with an error naming it', async () => {
  const port = await unusedPort();
  const relay = new SessionRelay({ url: `redis://127.0.0.1:${port}`, keyPrefix: 'x:', secret: SECRET, log: silentLog });
  try {
    await assert.rejects(
      relay.publish('s', { kind: 'resync' }),
      new RegExp(`^Error: Redis at 127\\.0\\.0\\.1:${port} is unreachable`),
    );
    await assert.rejects(relay.addSubscription('s', 'file:///a', Date.now() + 1_000), /is unreachable/);
  } finally {
    await relay.close();
  }
});

/** Polls an async count until it is 0 (an UNSUBSCRIBE takes effect a moment after it is sent). */
async function untilZero(count: () => Promise<number>): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if ((await count()) === 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}
