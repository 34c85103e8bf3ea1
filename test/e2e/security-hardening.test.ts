// Issue #16, each weakness attacked the way the red team did (retry forwarding through Redis is in
// retry-forwarding.test.ts). One gateway with API keys, anonymous callers and three policies:
//   alice — every server, and (once the reload names her) an operator
//   bob   — everything on server-everything, nothing on rec
//   carol — server-everything's echo and get-env only: no resources anywhere, not all of the server
// The config reads HARDEN_* secrets with ${VAR}; the child asks for HARDEN_* with inheritEnv.
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../infra/logger.js';
import { silentLog } from '../../infra/log.js';
import { everything, headersFor, post, request, ROOT, until, send, recordingServer } from './harness.js';
import { tempDir } from '../temp.js';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const CAROL = 'carol-key-0123456789abcdef';
const SECRETS = {
  HARDEN_ALICE_KEY: ALICE,
  HARDEN_MRTR_SECRET: 'mrtr-secret-never-in-a-child-0123',
  HARDEN_CONTEXT_SECRET: 'context-secret-never-in-a-child-01',
};
const dir = tempDir('mcp-gw-hardening-');
const recordFile = path.join(dir, 'rec.jsonl');

function rawConfig(operators?: object): Record<string, unknown> {
  return {
    listen: { port: 0, allowedHosts: ['gateway.test'] },
    servers: {
      everything: { ...everything, inheritEnv: ['HARDEN_*'], env: { GIVEN_ON_PURPOSE: 'yes' } },
      rec: recordingServer(recordFile, { id: 'rec', era: 'modern' }),
    },
    cache: { contextSecret: '${HARDEN_CONTEXT_SECRET}' },
    mrtr: { secret: '${HARDEN_MRTR_SECRET}' },
    auth: {
      anonymous: true,
      apiKeys: [
        { key: '${HARDEN_ALICE_KEY}', principal: 'alice' },
        { key: BOB, principal: 'bob' },
        { key: CAROL, principal: 'carol' },
      ],
      ...(operators && { operators }),
    },
    policies: [
      { name: 'all', principals: { ids: ['alice'] }, allow: { servers: ['everything', 'rec'] } },
      { name: 'everything', principals: { ids: ['bob'] }, allow: { servers: ['everything'] } },
      { name: 'echo', principals: { ids: ['carol'] }, allow: { tools: ['everything__echo', 'everything__get-env'] } },
    ],
  };
}

let gateway: RunningGateway;
let port: number;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

// The variables this file sets in process.env, and what they were before, restored when it ends.
const SET_ENV = { ...SECRETS, HARDEN_PLAIN: 'inherited-on-purpose', UNRELATED_SECRET_XYZ: 'not-for-children' };
const envBefore = Object.fromEntries(Object.keys(SET_ENV).map((name) => [name, process.env[name]]));

before(async () => {
  Object.assign(process.env, SET_ENV);
  gateway = await startGateway(
    parseConfig(rawConfig(), 'test', ROOT),
    process.env.TEST_LOG ? createLogger(process.env.TEST_LOG) : silentLog,
  );
  port = Number(new URL(gateway.url).port);
  assert.ok(
    await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000),
    'both servers ready',
  );
});

after(async () => {
  await gateway?.close();
  for (const [name, value] of Object.entries(envBefore)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `check` with auth.operators naming alice, then reloads the config every other test sees (none named). */
async function withAliceAsOperator(check: () => Promise<void>): Promise<void> {
  await gateway.reload(parseConfig(rawConfig({ ids: ['alice'] }), 't', ROOT));
  try {
    await check();
  } finally {
    await gateway.reload(parseConfig(rawConfig(), 't', ROOT));
  }
}

/** One HTTP request with headers exactly as given (a Host of our choosing, a header twice). */
function raw(
  method: string,
  pathname: string,
  headers: [string, string][],
  body?: string,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: pathname, headers: headers.flat(), setHost: false },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (chunk) => (text += chunk))
          .on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function mcpHeaders(
  body: { method: string; params?: Record<string, unknown> },
  extra: [string, string][] = [],
): [string, string][] {
  return [...Object.entries(headersFor(body)), ...extra];
}

function call(name: string, args: Record<string, unknown> = {}) {
  return request('tools/call', { name, arguments: args });
}

// ---- 1. secrets in a child's environment ----------------------------------------------------------------------

describe('1. a stdio child gets a minimal environment', () => {
  test(
    'get-env through the gateway shows no API key, mrtr.secret or other secret the config reads, nor unrelated ' +
      'variables',
    async () => {
      const answer = await send(`${gateway.url}/servers/everything/mcp`, call('get-env'), bearer(BOB));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const text = JSON.stringify(answer.body.result);
      for (const [name, value] of Object.entries(SECRETS)) {
        assert.ok(!text.includes(value), `${name}'s value reached the child`);
        assert.ok(!text.includes(name), `${name} reached the child`);
      }
      assert.ok(!text.includes('not-for-children'), 'a variable no inheritEnv names reached the child');
      // Controls: the base list, the server's own env, and what inheritEnv names (and the config does not read).
      assert.match(text, /PATH/);
      assert.match(text, /GIVEN_ON_PURPOSE/);
      assert.match(text, /inherited-on-purpose/);
    },
  );
});

// ---- 2. DNS rebinding: Host on a loopback listener -------------------------------------------------------------

describe('2. on loopback, a foreign Host gets 403 on every route', () => {
  test('operator pages, health, MCP endpoints and unknown paths refuse a rebinding Host', async () => {
    const foreign = ['127.evil.example', `127.evil.example:${port}`, 'attacker.example', 'localhost.evil.example'];
    for (const host of foreign) {
      for (const [method, pathname] of [
        ['GET', '/status.json'],
        ['GET', '/metrics'],
        ['GET', '/readyz'],
        ['GET', '/nothing'],
      ] as const) {
        const answer = await raw(method, pathname, [['host', host], ...Object.entries(bearer(ALICE))]);
        assert.equal(answer.status, 403, `${method} ${pathname} with Host ${host}`);
      }
      const body = request('tools/list');
      for (const pathname of ['/mcp', '/servers/everything/mcp']) {
        const answer = await raw(
          'POST',
          pathname,
          mcpHeaders(body, [
            ['host', host],
            ['authorization', `Bearer ${ALICE}`],
          ]),
          JSON.stringify(body),
        );
        assert.equal(answer.status, 403, `POST ${pathname} with Host ${host}`);
        assert.match(answer.body.error.message, /listen\.allowedHosts/);
      }
    }
  });

  test('control: loopback names and listen.allowedHosts are served', async () => {
    const body = request('tools/list');
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      `127.1.2.3:${port}`,
      'gateway.test',
      `GATEWAY.test:${port}`,
    ]) {
      const answer = await raw(
        'POST',
        '/mcp',
        mcpHeaders(body, [
          ['host', host],
          ['authorization', `Bearer ${ALICE}`],
        ]),
        JSON.stringify(body),
      );
      assert.equal(answer.status, 200, `Host ${host}: ${JSON.stringify(answer.body)}`);
    }
  });

  test('listen.host: 127.evil.example without auth: is refused at load', () => {
    assert.throws(
      () => parseConfig({ listen: { host: '127.evil.example' }, servers: {} }, 't', ROOT, {}),
      /listen\.host 127\.evil\.example is reachable from other machines/,
    );
  });
});

// ---- extra: single-valued headers sent twice --------------------------------------------------------------------

describe('a single-valued header sent twice is 400, not the first one silently', () => {
  const body = call('everything__echo', { message: 'twice' });
  for (const [name, first, second] of [
    ['Authorization', `Bearer ${CAROL}`, `Bearer ${ALICE}`],
    ['Mcp-Method', 'tools/call', 'tools/list'],
    ['Mcp-Name', 'everything__echo', 'everything__get-env'],
    ['MCP-Protocol-Version', '2026-07-28', '2025-11-25'],
  ] as const) {
    test(`two ${name} headers`, async () => {
      const headers = mcpHeaders(body).filter(([key]) => key.toLowerCase() !== name.toLowerCase());
      if (name !== 'Authorization') headers.push(['authorization', `Bearer ${CAROL}`]);
      const answer = await raw(
        'POST',
        '/mcp',
        [...headers, [name, first], [name, second], ['host', `127.0.0.1:${port}`]],
        JSON.stringify(body),
      );
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.match(answer.body.error.message, new RegExp(`${name.toLowerCase()} header was sent more than once`));
    });
  }
  test('control: each once', async () => {
    const answer = await raw(
      'POST',
      '/mcp',
      [...mcpHeaders(body), ['authorization', `Bearer ${CAROL}`], ['host', `127.0.0.1:${port}`]],
      JSON.stringify(body),
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  });
});

// ---- 4. operator pages ----------------------------------------------------------------------------------------------

describe('4. operator pages are for auth.operators only', () => {
  test('with auth.operators unset, even a principal allowed every server gets 403', async () => {
    for (const page of ['/', '/status.json', '/metrics']) {
      const answer = await fetch(`${gateway.url}${page}`, { headers: bearer(ALICE) });
      assert.equal(answer.status, 403, page);
      assert.match((await answer.json()).error.message, /auth\.operators/);
    }
  });

  test('control: once auth.operators names alice, she reads them and bob still does not', async () => {
    await withAliceAsOperator(async () => {
      for (const page of ['/', '/status.json', '/metrics']) {
        assert.equal((await fetch(`${gateway.url}${page}`, { headers: bearer(ALICE) })).status, 200, page);
        assert.equal((await fetch(`${gateway.url}${page}`, { headers: bearer(BOB) })).status, 403, page);
      }
    });
  });
});

// ---- 5. the server map ---------------------------------------------------------------------------------------------

describe('5. anonymous callers do not learn the server map', () => {
  test('a bare 404 on an unknown path and an unknown server, a bare /readyz', async () => {
    const nothing = await (await fetch(`${gateway.url}/nothing`)).json();
    assert.doesNotMatch(nothing.error.message, /servers|\/mcp/);
    const body = request('tools/list');
    const unknown = await post(`${gateway.url}/servers/nope/mcp`, body);
    assert.equal(unknown.status, 404);
    assert.doesNotMatch(unknown.body.error.message, /everything|rec|Endpoints/);
    const ready = await (await fetch(`${gateway.url}/readyz`)).json();
    assert.deepEqual(ready, { status: 'ready' });
    const bobsReady = await (await fetch(`${gateway.url}/readyz`, { headers: bearer(BOB) })).json();
    assert.deepEqual(bobsReady, { status: 'ready' }, 'a principal who is not an operator learns no more');
  });

  test('control: an operator gets the details', async () => {
    await withAliceAsOperator(async () => {
      const ready = await (await fetch(`${gateway.url}/readyz`, { headers: bearer(ALICE) })).json();
      assert.deepEqual(Object.keys(ready.upstreams).sort(), ['everything', 'rec']);
      const nothing = await (await fetch(`${gateway.url}/nothing`, { headers: bearer(ALICE) })).json();
      assert.match(nothing.error.message, /\/servers\/everything\/mcp/);
    });
  });
});

// ---- 6. what a denied resources/read costs ----------------------------------------------------------------------

describe('6. a denied resources/read takes the same path whether the URI exists or not', () => {
  const recLines = () => (existsSync(recordFile) ? readFileSync(recordFile, 'utf8').split('\n').filter(Boolean) : []);
  let barriers = 0;

  /** How many resource lists reached rec while `key` read `uri` on /mcp (refused either way). */
  async function listsCausedBy(key: string, uri: string): Promise<number> {
    await sleep(1_100); // past the once-a-second bound on re-reading lists
    const before = recLines().length;
    const answer = await send(`${gateway.url}/mcp`, request('resources/read', { uri }), bearer(key));
    assert.equal(answer.body.error?.code, -32602, JSON.stringify(answer.body));
    assert.equal(answer.body.error.message, `Resource not found: ${uri}`);
    // No settle time: a control call down the same ordered path (the gateway's pipe to rec); once rec has it,
    // every list the read caused is in the record before it.
    const marker = `barrier-${++barriers}`;
    const call = request('tools/call', { name: 'echo', arguments: { marker } });
    const control = await send(`${gateway.url}/servers/rec/mcp`, call, bearer(ALICE));
    assert.equal(control.status, 200, JSON.stringify(control.body));
    assert.ok(
      await until(() => recLines().some((line) => line.includes(marker)), 10_000),
      'the control call reached rec',
    );
    const lines = recLines().slice(before);
    return lines
      .slice(
        0,
        lines.findIndex((line) => line.includes(marker)),
      )
      .filter((line) => line.includes('"resources/list"')).length;
  }

  test('carol, who may read no resource anywhere: neither read looks anything up', async () => {
    assert.equal(await listsCausedBy(CAROL, 'recorded://rec/doc'), 0, 'existing URI');
    assert.equal(await listsCausedBy(CAROL, 'recorded://rec/nonexistent'), 0, 'nonexistent URI');
  });

  test('bob, who may read resources on another server: both reads cost the same re-reading', async () => {
    // The gateway must know the existing URI's owner first: else both reads are of a URI nobody listed yet,
    // and the case that could tell (a listed URI whose owner refuses bob, answered without re-reading) is
    // never taken. alice lists resources on /mcp, and rec's list holds the URI.
    const listing = await post(`${gateway.url}/mcp`, request('resources/list'), {
      ...headersFor(request('resources/list')),
      ...bearer(ALICE),
    });
    assert.ok(
      listing.body.result?.resources?.some((r: { uri: string }) => r.uri === 'recorded://rec/doc'),
      `the gateway listed the existing URI: ${JSON.stringify(listing.body).slice(0, 300)}`,
    );
    const existing = await listsCausedBy(BOB, 'recorded://rec/doc');
    const missing = await listsCausedBy(BOB, 'recorded://rec/nonexistent');
    // Not 0 = 0: each read did look the URI up (re-reading rec's list), and the same number of times.
    assert.ok(
      existing >= 1 && missing >= 1,
      `lists re-read: ${existing} for an existing URI, ${missing} for a missing one`,
    );
    assert.equal(existing, missing);
  });
});

// ---- extra: instructions on /mcp --------------------------------------------------------------------------------

describe("server/discover carries an upstream's instructions only to callers who see all it offers", () => {
  const discover = async (key: string, url = `${gateway.url}/mcp`) =>
    (await send(url, request('server/discover'), bearer(key))).body.result;
  test('carol (two tools of everything) gets no instructions, on /mcp nor on its endpoint', async () => {
    assert.equal((await discover(CAROL)).instructions, undefined);
    assert.equal((await discover(CAROL, `${gateway.url}/servers/everything/mcp`)).instructions, undefined);
  });
  test('control: bob (all of everything) gets them', async () => {
    assert.match((await discover(BOB)).instructions, /## everything/);
  });
});
