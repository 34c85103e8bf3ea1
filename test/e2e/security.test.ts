// Security checks at the HTTP edge, each proven twice: the request is refused, and nothing of it reaches an
// upstream. Every upstream here records each line it receives (test/fixtures/recording-server.mjs; the
// 2025-era one wraps the legacy fixture with its `ask` tool), so "nothing reached" is read from those files,
// and every refusal has a control beside it — the same request made right does reach the upstream — so the
// recording is shown to see what it should.
//
// Cases: a disallowed Origin; no or malformed credentials; forged JWTs (another key, alg none, HMAC with the
// public key, altered claims, unknown kid, expired, another audience); a requestState replayed by another
// principal; a 2025 session id used by another principal; /mcp cursors altered, re-signed with a guessed
// key, moved to another list, or issued to a principal who reaches more servers.
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { base64url, SignJWT } from 'jose';
import type { RunningGateway } from '../../src/gateway.js';
import {
  META,
  post,
  ROOT,
  schemaProblems,
  startTestGateway,
  until,
  type Answer,
  send,
  recordingServer,
} from './harness.js';
import { tempDir } from '../temp.js';
import { compiledFixture } from '../compiled-fixtures.js';

const ALICE = 'alice-key-0123456789abcdef'; // group full: pub, priv, legacy
const BOB = 'bob-key-0123456789abcdefgh'; // group limited: pub, legacy
const ALLOWED_ORIGIN = 'https://app.example';
const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'https://gateway.test/mcp';
const CURSOR_SECRET = 'cursor-secret-of-this-gateway-0123';

const dir = tempDir('mcp-gw-security-');
const recordOf = (server: string) => path.join(dir, `${server}.received.jsonl`);

const recording = (id: string, extra: Record<string, string> = {}) =>
  recordingServer(recordOf(id), { id, era: 'modern', env: { TOOL_COUNT: '4', PAGE_SIZE: '2', ...extra } });

// ---- what an upstream received -------------------------------------------------------------------------------

function received(server: string): string[] {
  return existsSync(recordOf(server)) ? readFileSync(recordOf(server), 'utf8').split('\n').filter(Boolean) : [];
}

/** The lines every upstream has received so far, to compare against after a refused request. */
function snapshot(): Record<string, number> {
  return Object.fromEntries(['pub', 'priv', 'legacy'].map((s) => [s, received(s).length]));
}

/**
 * Asserts that no upstream received anything since `before`. No sleep: a control call (alice's echo, on each
 * server's own endpoint) goes down the same ordered path — the gateway's one pipe to the child, read in
 * order — and once the child has recorded it, anything the refused request had let through would have been
 * recorded before it. So the lines since `before` up to the control must be none.
 */
async function assertNothingReached(before: Record<string, number>, what: string): Promise<void> {
  for (const [server, count] of Object.entries(before)) {
    const marker = `barrier-${server}-${nextId}`;
    const control = await send(`${gateway.url}/servers/${server}/mcp`, call('echo', { text: marker }), bearer(ALICE));
    assert.equal(control.status, 200, `control call to ${server}: ${JSON.stringify(control.body)}`);
    assert.ok(
      await until(() => received(server).some((line) => line.includes(marker)), 10_000),
      `the control call reached ${server}`,
    );
    const lines = received(server).slice(count);
    // The gateway's own reads (a tools/list it makes to learn which tools it may call, naming itself in
    // clientInfo) are not the refused request's: only what a client sent counts as leaked.
    const leaked = lines
      .slice(
        0,
        lines.findIndex((line) => line.includes(marker)),
      )
      .filter((line) => !isGatewaysOwn(line));
    assert.deepEqual(leaked, [], `${what}: ${server} received ${leaked.length} line(s) before the control call`);
  }
}

/** A request the gateway made on its own: its own clientInfo in `_meta`, which no test client sends. */
function isGatewaysOwn(line: string): boolean {
  try {
    const meta = (JSON.parse(line) as { params?: { _meta?: Record<string, { name?: string } | undefined> } }).params
      ?._meta;
    return meta?.['io.modelcontextprotocol/clientInfo']?.name === 'mcp-gateway';
  } catch {
    return false;
  }
}

/** Asserts that `server` received a line containing `marker` since `before` (the control case). */
async function assertReached(before: Record<string, number>, server: string, marker: string): Promise<void> {
  assert.ok(
    await until(
      () =>
        received(server)
          .slice(before[server])
          .some((line) => line.includes(marker)),
      5_000,
    ),
    `${server} received ${marker}`,
  );
}

// ---- the gateway under test ----------------------------------------------------------------------------------

let gateway: RunningGateway;
let mcp: string;
let signing: { privateKey: KeyObject; publicKey: KeyObject };
let stranger: { privateKey: KeyObject; publicKey: KeyObject };

before(async () => {
  signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwksFile = path.join(dir, 'jwks.json');
  writeFileSync(
    jwksFile,
    JSON.stringify({ keys: [{ ...signing.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }] }),
  );
  gateway = await startTestGateway(
    {
      pub: recording('pub'),
      priv: recording('priv'),
      legacy: {
        command: process.execPath,
        args: ['test/fixtures/recording-server.mjs', compiledFixture('legacy-server')],
        cwd: ROOT,
        era: 'legacy',
        env: { RECORD_FILE: recordOf('legacy') },
      },
    },
    { allowedOrigins: [ALLOWED_ORIGIN] },
    {
      aggregate: { cursorSecret: CURSOR_SECRET },
      audit: { destination: path.join(dir, 'audit.jsonl') },
      auth: {
        apiKeys: [
          { key: ALICE, principal: 'alice', groups: ['full'] },
          { key: BOB, principal: 'bob', groups: ['limited'] },
        ],
        jwt: { issuer: ISSUER, audience: AUDIENCE, jwksFile, algorithms: ['RS256'] },
      },
      policies: [
        { name: 'full', principals: { groups: ['full'] }, allow: { servers: ['pub', 'priv', 'legacy'] } },
        { name: 'limited', principals: { groups: ['limited'] }, allow: { servers: ['pub', 'legacy'] } },
      ],
    },
  );
  mcp = `${gateway.url}/mcp`;
  // The gateway's own traffic at start (the legacy handshake, one listen request to each modern upstream)
  // is over before any case begins, so a case's "nothing reached" sees only what the case caused.
  assert.ok(
    await until(
      () =>
        received('pub').some((l) => l.includes('subscriptions/listen')) &&
        received('priv').some((l) => l.includes('subscriptions/listen')),
      10_000,
    ),
  );
  assert.ok(
    await until(() => received('legacy').some((l) => l.includes('notifications/initialized')), 20_000),
    'the legacy child was initialised',
  );
  await sleep(200);
});

after(async () => {
  await gateway?.close();
});

let nextId = 1;
function call(name: string, args: Record<string, unknown>, meta: Record<string, unknown> = META) {
  return {
    jsonrpc: '2.0' as const,
    id: `s${nextId++}`,
    method: 'tools/call',
    params: { name, arguments: args, _meta: meta },
  };
}
function list(method: string, cursor?: unknown) {
  const params: Record<string, unknown> = { _meta: META };
  if (cursor !== undefined) params.cursor = cursor;
  return { jsonrpc: '2.0' as const, id: `s${nextId++}`, method, params };
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function assertRefused(answer: Answer, status: number, code: number, why?: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body?.error?.code, code, JSON.stringify(answer.body));
  if (why) assert.match(answer.body.error.message, why);
  assert.ok(!('result' in answer.body));
  assert.deepEqual(schemaProblems('', answer.body), []);
}

// ---- origins ---------------------------------------------------------------------------------------------------

describe('a disallowed Origin', () => {
  const origins = [
    'https://evil.example',
    'null',
    'http://localhost.evil.example',
    'http://127.0.0.1.nip.io',
    'https://app.example.evil.example',
    'https://app.example:8443',
    'http://app.example',
    `${ALLOWED_ORIGIN}, https://evil.example`,
    'file://',
    'chrome-extension://abcdefghijklmnop',
  ];

  test('control: the allowed origin and a loopback origin reach the upstream', async () => {
    for (const origin of [ALLOWED_ORIGIN, 'http://localhost:5173']) {
      const before = snapshot();
      const marker = `origin-ok-${nextId}`;
      const answer = await send(mcp, call('pub__echo', { text: marker }), { ...bearer(ALICE), origin });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.headers.get('access-control-allow-origin'), origin);
      await assertReached(before, 'pub', marker);
    }
  });

  for (const origin of origins) {
    test(`${origin}: 403 on /mcp and /servers/pub/mcp, preflight refused, nothing reaches an upstream`, async () => {
      const before = snapshot();
      for (const url of [mcp, `${gateway.url}/servers/pub/mcp`]) {
        const name = url === mcp ? 'pub__echo' : 'echo';
        assertRefused(
          await send(url, call(name, { text: 'from a foreign page' }), { ...bearer(ALICE), origin }),
          403,
          -32600,
          /Origin .* is not allowed/,
        );
        const preflight = await fetch(url, {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type',
          },
        });
        assert.equal(preflight.status, 403);
        assert.equal(preflight.headers.get('access-control-allow-origin'), null);
        await preflight.body?.cancel();
      }
      await assertNothingReached(before, origin);
    });
  }
});

// ---- credentials -------------------------------------------------------------------------------------------------

describe('without valid credentials', () => {
  const cases: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['an empty Bearer', { authorization: 'Bearer' }],
    ['Bearer and a space', { authorization: 'Bearer ' }],
    ['Basic credentials', { authorization: `Basic ${Buffer.from(`alice:${ALICE}`).toString('base64')}` }],
    ['an unknown key', bearer('not-a-key-0123456789abcdef')],
    ['a known key with a character changed', bearer(`${ALICE.slice(0, -1)}X`)],
    ['a known key in another case', bearer(ALICE.toUpperCase())],
    ['a known key with a suffix', bearer(`${ALICE}x`)],
    ['a known key as a prefix of the header value', { authorization: `Bearer ${ALICE} ${BOB}` }],
    ['the key without a scheme', { authorization: ALICE }],
    ['the key in another header', { 'x-api-key': ALICE }],
  ];

  for (const [what, headers] of cases) {
    test(`${what}: 401 with a Bearer challenge on every endpoint, and nothing reaches an upstream`, async () => {
      const before = snapshot();
      for (const [url, body] of [
        [mcp, call('pub__echo', { text: 'no credentials' })],
        [`${gateway.url}/servers/priv/mcp`, call('echo', { text: 'no credentials' })],
        [mcp, list('tools/list')],
        [
          `${gateway.url}/servers/legacy/mcp`,
          call(
            'ask',
            { question: 'anyone?' },
            { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
          ),
        ],
      ] as const) {
        const answer = await send(url, body, headers);
        assertRefused(answer, 401, -32600);
        assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
      await assertNothingReached(before, what);
    });
  }

  test('control: the same requests with a key reach the upstreams', async () => {
    const before = snapshot();
    assert.equal((await send(mcp, call('pub__echo', { text: 'keyed-pub' }), bearer(ALICE))).status, 200);
    assert.equal(
      (await send(`${gateway.url}/servers/priv/mcp`, call('echo', { text: 'keyed-priv' }), bearer(ALICE))).status,
      200,
    );
    await assertReached(before, 'pub', 'keyed-pub');
    await assertReached(before, 'priv', 'keyed-priv');
  });
});

// ---- forged JWTs ---------------------------------------------------------------------------------------------------

describe('forged JWTs', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const claims = () => ({ iss: ISSUER, aud: AUDIENCE, sub: 'dave', groups: ['full'], iat: now(), exp: now() + 300 });
  const sign = (
    payload: Record<string, unknown>,
    key: KeyObject = signing.privateKey,
    header: Record<string, unknown> = { alg: 'RS256', kid: 'k1' },
  ) => new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(key);
  const segment = (value: unknown) => base64url.encode(JSON.stringify(value));

  test('control: a token signed by the configured key reaches the upstream', async () => {
    const before = snapshot();
    const answer = await send(mcp, call('priv__echo', { text: 'jwt-ok' }), bearer(await sign(claims())));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    await assertReached(before, 'priv', 'jwt-ok');
  });

  const forged: [string, () => Promise<string>][] = [
    ['signed by another key under the same kid', () => sign(claims(), stranger.privateKey)],
    [
      'signed by another key under an unknown kid',
      () => sign(claims(), stranger.privateKey, { alg: 'RS256', kid: 'k2' }),
    ],
    ['alg none, no signature', async () => `${segment({ alg: 'none', typ: 'JWT' })}.${segment(claims())}.`],
    [
      'alg none, with the genuine signature attached',
      async () => {
        const genuine = await sign(claims());
        return `${segment({ alg: 'none', kid: 'k1' })}.${genuine.split('.')[1]}.${genuine.split('.')[2]}`;
      },
    ],
    [
      'HS256 keyed with the public key (algorithm confusion)',
      async () => {
        const pem = signing.publicKey.export({ format: 'pem', type: 'spki' }).toString();
        const input = `${segment({ alg: 'HS256', kid: 'k1', typ: 'JWT' })}.${segment(claims())}`;
        return `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
      },
    ],
    [
      'the claims changed after signing (another subject, more groups)',
      async () => {
        const genuine = (await sign({ ...claims(), sub: 'eve', groups: [] })).split('.');
        return `${genuine[0]}.${segment({ ...claims(), sub: 'alice', groups: ['full', 'admin'] })}.${genuine[2]}`;
      },
    ],
    ['the signature cut off', async () => (await sign(claims())).split('.').slice(0, 2).join('.') + '.'],
    ['expired', () => sign({ ...claims(), iat: now() - 7200, exp: now() - 3600 })],
    ['issued for another audience', () => sign({ ...claims(), aud: 'https://other.test/' })],
    ['issued by another issuer', () => sign({ ...claims(), iss: 'https://issuer.evil/' })],
    ['without exp', () => sign({ iss: ISSUER, aud: AUDIENCE, sub: 'dave', groups: ['full'] })],
  ];

  for (const [what, make] of forged) {
    test(`${what}: 401 invalid_token, and nothing reaches an upstream`, async () => {
      const token = await make();
      const before = snapshot();
      for (const [url, body] of [
        [mcp, call('priv__echo', { text: 'forged' })],
        [`${gateway.url}/servers/priv/mcp`, call('echo', { text: 'forged' })],
        [mcp, list('tools/list')],
      ] as const) {
        const answer = await send(url, body, bearer(token));
        assertRefused(answer, 401, -32600);
        assert.match(answer.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      }
      await assertNothingReached(before, what);
    });
  }
});

// ---- another principal's requestState, and another principal's 2025 session ----------------------------------------

describe("another principal's requestState", () => {
  const ELICITATION = { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
  const answerOf = (name: string) => ({ 'elicitation-1': { action: 'accept', content: { name } } });

  for (const [label, url, tool] of [
    ['/mcp', () => mcp, 'legacy__ask'],
    ['/servers/legacy/mcp', () => `${gateway.url}/servers/legacy/mcp`, 'ask'],
  ] as const) {
    test(
      `on ${label}: bob's retry with alice's requestState is refused and the held call hears nothing; alice's ` +
        `retry completes`,
      async () => {
        const question = `who-${nextId}?`;
        const first = call(tool, { question }, ELICITATION);
        const asked = await send(url(), first, bearer(ALICE));
        assert.equal(asked.body?.result?.resultType, 'input_required', JSON.stringify(asked.body));
        const requestState: string = asked.body.result.requestState;
        assert.ok(
          await until(() => received('legacy').some((l) => l.includes(question)), 5_000),
          'the call reached the legacy server',
        );
        await sleep(100);

        const before = snapshot();
        for (const where of [url(), label === '/mcp' ? `${gateway.url}/servers/legacy/mcp` : mcp]) {
          const name = where === mcp ? 'legacy__ask' : 'ask';
          const stolen = {
            ...first,
            id: `s${nextId++}`,
            params: { ...first.params, name, inputResponses: answerOf('Mallory'), requestState },
          };
          const answer = await send(where, stolen, bearer(BOB));
          assert.equal(answer.status, 200);
          assert.equal(answer.body?.error?.code, -32602, JSON.stringify(answer.body));
          assert.match(answer.body.error.message, /^Invalid requestState: /);
          assert.deepEqual(schemaProblems('tools/call', answer.body), []);
        }
        await assertNothingReached(before, "bob's retries");
        assert.ok(
          !received('legacy').some((line) => line.includes('Mallory')),
          "bob's answer never reached the server",
        );

        // The genuine retry still completes: the held call was neither answered nor cancelled by bob.
        const retry = {
          ...first,
          id: `s${nextId++}`,
          params: { ...first.params, inputResponses: answerOf('Alice'), requestState },
        };
        const done = await send(url(), retry, bearer(ALICE));
        assert.equal(done.status, 200);
        assert.deepEqual(JSON.parse(done.body.result.content[0].text), {
          action: 'accept',
          content: { name: 'Alice' },
        });
        await assertReached(before, 'legacy', 'Alice');
      },
    );
  }

  test(
    "a 2025 client's Mcp-Session-Id used by another principal is refused, " + 'and nothing reaches an upstream',
    async () => {
      const init = {
        jsonrpc: '2.0',
        id: 'init',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'sec', version: '1' } },
      };
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const opened = await post(mcp, init, { ...headers, ...bearer(ALICE) });
      const session = opened.headers.get('mcp-session-id');
      assert.equal(opened.status, 200, JSON.stringify(opened.body));
      assert.ok(session, 'initialize answered with an Mcp-Session-Id');
      const callOnSession = (text: string) => ({
        jsonrpc: '2.0',
        id: `s${nextId++}`,
        method: 'tools/call',
        params: { name: 'pub__echo', arguments: { text } },
      });
      const before = snapshot();
      const stolen = await post(mcp, callOnSession('session-thief'), {
        ...headers,
        ...bearer(BOB),
        'mcp-session-id': session,
      });
      assert.ok(stolen.status >= 400 && stolen.status < 500, `status ${stolen.status}: ${JSON.stringify(stolen.body)}`);
      assert.ok(stolen.body?.error, JSON.stringify(stolen.body));
      await assertNothingReached(before, 'a call on a stolen session');
      const own = await post(mcp, callOnSession('session-owner'), {
        ...headers,
        ...bearer(ALICE),
        'mcp-session-id': session,
      });
      assert.equal(own.status, 200, JSON.stringify(own.body));
      await assertReached(before, 'pub', 'session-owner');
    },
  );
});

// ---- cursors -----------------------------------------------------------------------------------------------------

describe('/mcp cursors', () => {
  /**
   * Page 1 of tools/list for alice (she reaches pub, priv and legacy): its cursor names pub's and priv's next pages.
   */
  async function alicesCursor(): Promise<{ cursor: string; positions: [string, string | null][] }> {
    const page = await send(mcp, list('tools/list'), bearer(ALICE));
    assert.equal(page.status, 200, JSON.stringify(page.body));
    const cursor: string = page.body.result.nextCursor;
    assert.equal(typeof cursor, 'string');
    const positions = JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString('utf8'));
    assert.ok(
      positions.some(([server]: [string]) => server === 'priv'),
      `the cursor names priv: ${JSON.stringify(positions)}`,
    );
    return { cursor, positions };
  }
  const encode = (positions: unknown) => Buffer.from(JSON.stringify(positions)).toString('base64url');
  const mac = (method: string, payload: string, key: string) =>
    createHmac('sha256', key).update(method).update('\0').update(payload).digest('base64url').slice(0, 22);
  const namesIn = (answer: Answer): string[] =>
    (answer.body?.result?.tools ?? []).map((tool: { name: string }) => tool.name);

  test('control: alice follows her cursor to the next pages of pub and priv', async () => {
    const { cursor } = await alicesCursor();
    const before = snapshot();
    const next = await send(mcp, list('tools/list', cursor), bearer(ALICE));
    assert.equal(next.status, 200);
    assert.ok(
      namesIn(next).some((n) => n.startsWith('priv__')),
      JSON.stringify(namesIn(next)),
    );
    await assertReached(before, 'priv', '"cursor":"2"');
  });

  test(
    'altered, re-signed with guessed keys, moved to another list, or malformed: -32602, and no list reaches an ' +
      'upstream',
    async () => {
      const { cursor, positions } = await alicesCursor();
      const [payload, signature] = cursor.split('.') as [string, string];
      const crafted: [string, unknown][] = [
        ['positions rewritten to priv from its start, old MAC', `${encode([['priv', null]])}.${signature}`],
        [
          'positions rewritten to priv at an upstream cursor of our choosing, old MAC',
          `${encode([['priv', '0']])}.${signature}`,
        ],
        [
          'one character of the payload changed',
          `${payload.slice(0, -1)}${payload.at(-1) === 'A' ? 'B' : 'A'}.${signature}`,
        ],
        [
          'one character of the MAC changed (not the last)',
          `${payload}.${signature.slice(0, 5)}${signature[5] === 'A' ? 'B' : 'A'}${signature.slice(6)}`,
        ],
        ['the MAC cut short', `${payload}.${signature.slice(0, 10)}`],
        ['no MAC', payload],
        ['an empty MAC', `${payload}.`],
        ['signed with an empty key', `${encode([['priv', '0']])}.${mac('tools/list', encode([['priv', '0']]), '')}`],
        [
          'signed with a guessed key',
          `${encode([['priv', '0']])}.${mac('tools/list', encode([['priv', '0']]), 'secret')}`,
        ],
        ['a server that does not exist, old MAC', `${encode([['nope', null]])}.${signature}`],
        ['the positions as an object', `${encode({ priv: '0' })}.${signature}`],
        ['the genuine cursor on prompts/list', cursor],
        ['the genuine cursor on resources/list', cursor],
        ['the genuine cursor twice', `${cursor}${cursor}`],
        ['a number', 12],
        ['an object', { positions }],
        ['an empty string', ''],
      ];
      for (const [what, value] of crafted) {
        const method = what.includes('prompts/list')
          ? 'prompts/list'
          : what.includes('resources/list')
            ? 'resources/list'
            : 'tools/list';
        const before = snapshot();
        const answer = await send(mcp, list(method, value), bearer(ALICE));
        assert.equal(answer.status, 200, `${what}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body?.error?.code, -32602, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`);
        assert.match(answer.body.error.message, /Invalid cursor/, what);
        await assertNothingReached(before, what);
      }
    },
  );

  test('a MAC whose last character is changed in the bits base64url decoding drops: -32602', async () => {
    const { cursor } = await alicesCursor();
    const [payload, signature] = cursor.split('.') as [string, string];
    const last = signature.at(-1)!;
    // Same top two bits, other low four bits: an equal decoded byte string, a different MAC text.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = alphabet[(alphabet.indexOf(last) & 0b110000) | ((alphabet.indexOf(last) + 1) & 0b001111)]!;
    const before = snapshot();
    const answer = await send(mcp, list('tools/list', `${payload}.${signature.slice(0, -1)}${twin}`), bearer(ALICE));
    assert.equal(answer.body?.error?.code, -32602, JSON.stringify(answer.body).slice(0, 300));
    await assertNothingReached(before, 'a cursor with another MAC spelling');
  });

  test("bob (pub and legacy only) following alice's cursor gets nothing of priv, and priv hears nothing", async () => {
    const { cursor } = await alicesCursor();
    const before = snapshot();
    const answer = await send(mcp, list('tools/list', cursor), bearer(BOB));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    if ('result' in answer.body) {
      assert.deepEqual(
        namesIn(answer).filter((n) => !n.startsWith('pub__')),
        [],
        'only pub items on the page',
      );
      assert.deepEqual(schemaProblems('tools/list', answer.body), []);
      if (typeof answer.body.result.nextCursor === 'string') {
        const positions = JSON.parse(
          Buffer.from(answer.body.result.nextCursor.split('.')[0], 'base64url').toString('utf8'),
        );
        assert.ok(
          !positions.some(([server]: [string]) => server === 'priv'),
          `bob's next cursor names priv: ${JSON.stringify(positions)}`,
        );
      }
    } else {
      assert.equal(answer.body.error.code, -32602);
    }
    await assertNothingReached({ priv: before.priv! }, "bob following alice's cursor");
    // Nor is priv's page served to bob from what alice's request cached.
    const again = await send(mcp, list('tools/list', cursor), bearer(BOB));
    assert.deepEqual(
      namesIn(again).filter((n) => n.startsWith('priv__')),
      [],
    );
  });

  test(
    'bob cannot reach priv through its own endpoint either: ' + '404 like an unknown server, and priv hears nothing',
    async () => {
      const before = snapshot();
      const answer = await send(`${gateway.url}/servers/priv/mcp`, list('tools/list'), bearer(BOB));
      assertRefused(answer, 404, -32600, /No server named 'priv'/);
      assert.ok(
        !answer.body.error.message.includes('/servers/priv/mcp'),
        'the refusal does not list priv among the endpoints',
      );
      const called = await send(mcp, call('priv__echo', { text: 'bob-to-priv' }), bearer(BOB));
      assert.equal(called.body?.error?.code, -32602, JSON.stringify(called.body));
      await assertNothingReached(before, "bob's requests to priv");
    },
  );
});
