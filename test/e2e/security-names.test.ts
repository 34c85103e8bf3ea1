// Issue #35, items 1 and 7, attacked as the red team did: giant names and URIs on every endpoint (search
// mode's call_tool takes its name from its arguments, so only the body bounds it), a Host that a lenient
// split reads as loopback, and the 404 that named every profile to every caller.
//   alice — both servers; a deny glob of 20 stars (the one that made a giant name cost seconds)
//   bob   — server-everything only
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningGateway } from '../../src/gateway.js';
import { everything, request, startTestGateway, until, send, recordingServer } from './harness.js';
import { tempDir } from '../temp.js';

const ALICE = 'alice-names-key-0123456789abcdef';
const BOB = 'bob-names-key-0123456789abcdefgh';
const dir = tempDir('mcp-gw-names-');
const auditFile = path.join(dir, 'audit.jsonl');
const DENY_GLOB = `${'*a'.repeat(20)}*`;

let gateway: RunningGateway;
let port: number;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

before(async () => {
  gateway = await startTestGateway(
    {
      everything,
      rec: recordingServer(path.join(dir, 'rec.jsonl'), { id: 'rec', era: 'modern' }),
    },
    {},
    {
      auth: {
        apiKeys: [
          { key: ALICE, principal: 'alice' },
          { key: BOB, principal: 'bob' },
        ],
      },
      policies: [
        {
          name: 'all',
          principals: { ids: ['alice'] },
          allow: { servers: ['everything', 'rec'] },
          deny: { tools: [DENY_GLOB] },
        },
        { name: 'everything', principals: { ids: ['bob'] }, allow: { servers: ['everything'] } },
      ],
      profiles: { reconly: { tools: ['rec__*'], prompts: [], resources: [] }, every: {} },
      audit: { destination: auditFile, arguments: true },
    },
  );
  port = Number(new URL(gateway.url).port);
  assert.ok(
    await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000),
    'both servers ready',
  );
});

after(async () => {
  await gateway?.close();
});

const longName = (n: number) => `everything__${'x'.repeat(n - 'everything__'.length)}`;

function auditLines(): string[] {
  return readFileSync(auditFile, 'utf8').split('\n').filter(Boolean);
}

describe('1. names and URIs are length-checked before routing, globs or policy', () => {
  for (const endpoint of ['/mcp', '/servers/everything/mcp', '/profiles/every/mcp', '/search/mcp']) {
    test(`tools/call with a 129-character name on ${endpoint} is 400 -32602 naming the bound`, async () => {
      const body = request('tools/call', { name: longName(129), arguments: {} });
      const answer = await send(`${gateway.url}${endpoint}`, body, bearer(ALICE));
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, -32602);
      assert.match(answer.body.error.message, /longer than 128 characters/);
    });
  }

  test('control: a 128-character name is not refused for its length', async () => {
    const body = request('tools/call', { name: longName(128), arguments: {} });
    const answer = await send(`${gateway.url}/mcp`, body, bearer(ALICE));
    assert.doesNotMatch(JSON.stringify(answer.body), /longer than 128/);
  });

  test(
    'prompts/get with a 129-character name, resources/read with a 9000-character URI: ' + '400, quoting a prefix only',
    async () => {
      const prompt = request('prompts/get', { name: longName(129) });
      const refused = await send(`${gateway.url}/mcp`, prompt, bearer(ALICE));
      assert.equal(refused.status, 400);
      assert.match(refused.body.error.message, /prompt name .* longer than 128/);
      const uri = `demo://${'u'.repeat(9000)}`;
      const read = request('resources/read', { uri });
      const answer = await send(`${gateway.url}/servers/everything/mcp`, read, bearer(ALICE));
      assert.equal(answer.status, 400);
      assert.match(answer.body.error.message, /longer than 8192 characters/);
      assert.ok(
        answer.body.error.message.length < 400,
        `the refusal quotes ${answer.body.error.message.length} characters`,
      );
    },
  );

  test(
    "search mode's call_tool with a 3 MB name is refused with a bounded message and audit line; " + '/healthz answers',
    async () => {
      const before = auditLines().length;
      const name = `everything__${'a'.repeat(3 * 1024 * 1024)}`;
      const body = request('tools/call', { name: 'call_tool', arguments: { name, arguments: {} } });
      const answer = await send(`${gateway.url}/search/mcp`, body, bearer(ALICE));
      assert.equal(answer.body.result?.isError, true, JSON.stringify(answer.body).slice(0, 300));
      const text = JSON.stringify(answer.body);
      assert.match(text, /longer than 128 characters/);
      assert.ok(text.length < 1000, `the answer is ${text.length} characters`);
      assert.equal((await fetch(`${gateway.url}/healthz`)).status, 200);
      // The audit line carries the arguments (audit.arguments: true) but no target or rule built from the name.
      const added = auditLines().slice(before);
      assert.ok(added.length >= 1, 'the call was audited');
      for (const line of added) {
        const entry = JSON.parse(line);
        assert.ok(String(entry.target ?? '').length <= 200, 'the audit target is bounded');
        assert.ok(String(entry.rule ?? '').length <= 200, 'the audit rule is bounded');
      }
    },
  );

  test('a 2025 client (SDK 1.x) calling a 129-character name gets -32602 naming the bound', async () => {
    const client = new Client1({ name: 'names-2025', version: '1.0.0' });
    await client.connect(new Transport1(new URL(`${gateway.url}/mcp`), { requestInit: { headers: bearer(ALICE) } }));
    try {
      await assert.rejects(
        client.callTool({ name: longName(129), arguments: {} }),
        (error: { code?: number; message?: string }) => {
          assert.equal(error.code, -32602);
          assert.match(String(error.message), /longer than 128 characters/);
          return true;
        },
      );
      const prompt = client.getPrompt({ name: longName(129) });
      await assert.rejects(prompt, /longer than 128 characters/);
    } finally {
      await client.close();
    }
  });
});

/** One HTTP request with the Host header exactly as given. */
function rawGet(pathname: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'GET', path: pathname, headers: { host }, setHost: false },
      (res) => {
        res.resume().on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('7. Host is parsed strictly on a loopback listener', () => {
  test('`127.0.0.1:80@evil.com` and other authorities a lenient split reads as loopback are refused', async () => {
    for (const host of [
      '127.0.0.1:80@evil.com',
      `127.0.0.1:${port}@evil.com`,
      'localhost:80@evil.com',
      '127.0.0.1:80/evil.com',
      'localhost:x',
      '127.0.0.1:80:80',
      '[::1]x',
    ]) {
      assert.equal(await rawGet('/healthz', host), 403, `Host ${host}`);
    }
  });

  test('control: plain loopback authorities are served', async () => {
    for (const host of [`127.0.0.1:${port}`, 'localhost', `[::1]:${port}`, `LOCALHOST:${port}`])
      assert.equal(await rawGet('/healthz', host), 200, `Host ${host}`);
  });
});

describe('7. a 404 names only the profiles the caller may use', () => {
  test('bob (server-everything only) is not told of a profile over rec alone; alice is', async () => {
    const body = request('tools/list');
    const forBob = await send(`${gateway.url}/profiles/nosuch/mcp`, body, bearer(BOB));
    assert.equal(forBob.status, 404);
    assert.doesNotMatch(forBob.body.error.message, /reconly/);
    assert.match(forBob.body.error.message, /\/profiles\/every\/mcp/);
    assert.doesNotMatch(forBob.body.error.message, /\/servers\/rec\//);
    const forAlice = await send(`${gateway.url}/profiles/nosuch/mcp`, body, bearer(ALICE));
    assert.match(forAlice.body.error.message, /\/profiles\/reconly\/mcp/);
  });
});
