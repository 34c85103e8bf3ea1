// Someone who can write to Redis copies a genuine signed entry of the 2025 session relay and spells its MAC
// another way that decodes to the same bytes (padding, the base64 alphabet, the spare bits of the last
// character, characters a decoder skips). Each spelling is a different Redis member: a copied subscription
// would outlive the SREM of its original, an ended-session entry would be counted again. Every spelling
// but the one the relay writes is refused. Real Redis at 127.0.0.1:6379, unique key prefix.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { SessionRelay, type EndedSession } from '../../src/legacy-client/session-relay.js';
import { silentLog } from '../../infra/log.js';
import { scratchRedis } from '../e2e/own-redis.js';
import { sharedRedis } from '../services.js';
import { scaled } from '../timing.js';
import { retried } from '../timing.js';

const URL = 'redis://127.0.0.1:6379';
const redisNeed = await sharedRedis('the session relay MAC spelling tests');
const SECRET = Buffer.from('session-relay-mac-spellings-secret-0123');
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Other spellings of `mac` (unpadded base64url of 32 bytes) that a base64url decoder reads as the same bytes. */
function respellings(mac: string): string[] {
  const last = BASE64URL.indexOf(mac.at(-1)!);
  const spellings = [
    `${mac}=`,
    `${mac}==`,
    // 43 characters carry 258 bits for 256: the last character's two low bits are spare.
    ...[1, 2, 3].map((bits) => mac.slice(0, -1) + BASE64URL[last ^ bits]),
    // The base64 alphabet for the base64url one (the MAC is made to contain both kinds of character).
    mac.replaceAll('-', '+').replaceAll('_', '/'),
    ` ${mac}`,
    `${mac.slice(0, 20)}\n${mac.slice(20)}`,
    `${mac}!`,
  ];
  const unique = [...new Set(spellings)].filter((spelling) => spelling !== mac);
  for (const spelling of unique) {
    assert.ok(
      Buffer.from(spelling, 'base64url').equals(Buffer.from(mac, 'base64url')),
      `${JSON.stringify(spelling)} decodes to the same bytes`,
    );
  }
  return unique;
}

/**
 * The relays' Redis commands may take a few seconds (cache.commandTimeoutMs): what one replica publishes or
 * stores for another is under test, and a command dropped for taking 150 ms on a loaded machine would fail it
 * for nothing (the 150 ms default has its own test, redis-command-timeout).
 */
const COMMAND_TIMEOUT_MS = scaled(5_000);

function relay(keyPrefix: string) {
  const ended: EndedSession[] = [];
  const instance = new SessionRelay({
    url: URL,
    keyPrefix,
    secret: SECRET,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    log: silentLog,
  });
  instance.attach({ event: () => {}, ended: (sessions) => ended.push(...sessions) });
  return { relay: instance, ended };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(check(), what);
}

/** A session name whose MAC holds both '-' and '_', so the base64 spelling differs from it (found by trying). */
async function sessionWithBothAlphabets(prefix: string, macOf: (session: string) => Promise<string>): Promise<string> {
  for (let i = 0; ; i++) {
    const session = `${prefix}-${i}`;
    const mac = await macOf(session);
    if (mac.includes('-') && mac.includes('_')) return session;
  }
}

describe('SessionRelay refuses other spellings of a genuine MAC', { skip: redisNeed.skip }, () => {
  before(() => redisNeed.check());
  const { keyPrefix, redis } = scratchRedis();

  test('a respelled subscription entry is not applied and does not outlive the unsubscription', async () => {
    const prefix = `${keyPrefix}subscriptions:`;
    const uri = 'file:///watched';
    const expiresAt = Date.now() + 60_000;
    const a = relay(prefix);
    try {
      const entryOf = async (session: string) => {
        await retried(() => a.relay.addSubscription(session, uri, expiresAt));
        const [entry] = await redis.smembers(`${prefix}session:${session}:subscriptions`);
        return entry!;
      };
      const session = await sessionWithBothAlphabets('victim', async (s) => {
        const entry = await entryOf(s);
        return entry.slice(0, entry.indexOf('.'));
      });
      const entry = await entryOf(session);
      const mac = entry.slice(0, entry.indexOf('.'));
      const spellings = respellings(mac);
      assert.ok(spellings.length >= 8, 'every kind of spelling is tried');
      await redis.sadd(
        `${prefix}session:${session}:subscriptions`,
        ...spellings.map((spelling) => `${spelling}.${uri}`),
      );

      assert.deepEqual(
        await a.relay.subscriptions(session),
        [uri],
        'the genuine entry counts once; its respellings not at all',
      );
      await a.relay.removeSubscription(session, uri);
      assert.equal(
        await redis.scard(`${prefix}session:${session}:subscriptions`),
        spellings.length,
        'the copies are still in Redis',
      );
      assert.deepEqual(await a.relay.subscriptions(session), [], 'unsubscribed, whatever copies were left behind');
    } finally {
      await a.relay.close();
    }
  });

  test('a respelled ended-session entry is not heard, live or on catch-up', async () => {
    const prefix = `${keyPrefix}ended:`;
    const endedKey = `${prefix}sessions:ended`;
    const expiresAt = Date.now() + 60_000;
    const running = relay(prefix);
    let late: ReturnType<typeof relay> | undefined;
    try {
      const macOf = async (session: string) => {
        await retried(() => running.relay.end(session, expiresAt));
        const member = (await redis.zrange(endedKey, '0', '-1')).find((m) => m.startsWith(`${expiresAt}.${session}.`))!;
        return member.slice(member.lastIndexOf('.') + 1);
      };
      const session = await sessionWithBothAlphabets('ended', macOf);
      const spellings = respellings(await macOf(session));
      await until(() => running.ended.some((e) => e.session === session), 'the genuine DELETE was heard');
      const heardBefore = running.ended.length;

      const forged = spellings.map((spelling) => `${expiresAt}.${session}.${spelling}`);
      await redis.zadd(endedKey, ...forged.flatMap((member) => [expiresAt, member]));
      for (const member of forged) await redis.publish(endedKey, member);
      // A genuine DELETE after them on the same channel: once it is heard, the forgeries were too.
      await retried(() => running.relay.end('control', expiresAt));
      await until(() => running.ended.some((e) => e.session === 'control'), 'the control DELETE was heard');
      assert.deepEqual(
        running.ended.slice(heardBefore).map((e) => e.session),
        ['control'],
        'heard live: none of the respellings',
      );

      const genuineMembers = (await redis.zcard(endedKey)) - forged.length;
      late = relay(prefix);
      const { ended } = late;
      await until(() => ended.length >= genuineMembers, 'a relay started afterwards read the ended set');
      assert.equal(ended.length, genuineMembers, 'read on catch-up: each genuine entry once, no respelling');
      assert.equal(ended.filter((e) => e.session === session).length, 1);
    } finally {
      await Promise.all([running.relay.close(), late?.relay.close()]);
    }
  });
});
