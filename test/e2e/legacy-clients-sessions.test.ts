// 2025-era clients downstream (issue #10; shared plumbing in legacy-clients-kit.ts): a 2025 session
// id carries its own state, so any gateway instance with the same legacyClients.sessionSecret serves it and
// others refuse it; sessions expire after legacyClients.sessionTtlMs.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, startTestGateway } from './harness.js';
import {
  SECRET,
  OTHER_SECRET,
  initialize,
  send,
  legacyResult,
  tamper,
  assertSessionGone,
} from './legacy-clients-kit.js';

// ---- sessions across gateway instances ---------------------------------------------------------------

describe('a session id carries its own state: any instance with the same secret serves it', () => {
  let minting: RunningGateway;
  let sameSecret: RunningGateway;
  let otherSecret: RunningGateway;
  let randomSecret: RunningGateway;
  before(async () => {
    [minting, sameSecret, otherSecret, randomSecret] = await Promise.all([
      startTestGateway({ modern: fixture('modern-server') }, {}, { legacyClients: { sessionSecret: SECRET } }),
      startTestGateway({ modern: fixture('modern-server') }, {}, { legacyClients: { sessionSecret: SECRET } }),
      startTestGateway({ modern: fixture('modern-server') }, {}, { legacyClients: { sessionSecret: OTHER_SECRET } }),
      startTestGateway({ modern: fixture('modern-server') }), // no secret configured: a random one of its own
    ]);
  });
  after(async () => {
    await Promise.all([minting?.close(), sameSecret?.close(), otherSecret?.close(), randomSecret?.close()]);
  });

  test('accepted by a second gateway with the same legacyClients.sessionSecret, refused by others', {
    timeout: 30_000,
  }, async () => {
    const { session } = await initialize(`${minting.url}/servers/modern/mcp`, '2025-06-18');
    legacyResult(await send(session, 'tools/list'));

    const there = { ...session, url: `${sameSecret.url}/servers/modern/mcp` };
    const tools = legacyResult(await send(there, 'tools/list'));
    assert.ok(tools.tools.some((t: { name: string }) => t.name === 'echo'));
    assert.deepEqual(
      legacyResult(await send(there, 'tools/call', { name: 'echo', arguments: { text: 'replica' } })).content,
      [{ type: 'text', text: 'replica' }],
    );
    legacyResult(await send(there, 'ping'));

    await assertSessionGone({ ...session, url: `${otherSecret.url}/servers/modern/mcp` }, 'another secret');
    await assertSessionGone({ ...session, url: `${randomSecret.url}/servers/modern/mcp` }, 'a random secret');
    await assertSessionGone({ ...there, id: tamper(session.id) }, 'tampered, on the second instance');
  });
});

describe('sessions expire after legacyClients.sessionTtlMs', () => {
  const TTL_MS = 3_000;
  let short: RunningGateway;
  before(async () => {
    short = await startTestGateway(
      { modern: fixture('modern-server') },
      {},
      { legacyClients: { sessionTtlMs: TTL_MS } },
    );
  });
  after(() => short?.close());

  test('served while fresh, 404 once expired', { timeout: 30_000 }, async () => {
    // The session's expiry is set between `asked` and `minted` (this test's clock): it is certainly served
    // when the request came back before asked + TTL, and certainly expired after minted + TTL. A machine too
    // slow for the first is not held against the gateway: the served case is then left to the other tests.
    const asked = Date.now();
    const { session } = await initialize(`${short.url}/servers/modern/mcp`);
    const minted = Date.now();
    const answer = await send(session, 'tools/list');
    if (Date.now() < asked + TTL_MS) legacyResult(answer);
    await sleep(Math.max(0, minted + TTL_MS + 5 - Date.now()));
    await assertSessionGone(session, 'expired');
    // A new initialize opens a new session.
    const { session: again } = await initialize(session.url);
    assert.notEqual(again.id, session.id);
    legacyResult(await send(again, 'ping'));
  });
});
