// ${file:…} secrets against a real child (issue 34, item 3): server-everything's get-env prints the child's
// whole environment. The config reads an API key and mrtr.secret from files, and hands one file secret to
// the child on purpose through its env:; the child asks for everything with inheritEnv: ["*"]. It must see
// the one it was handed and neither of the others.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { everything, request, ROOT, until, send } from './harness.js';
import { tempDir } from '../temp.js';

const API_KEY = 'file-api-key-0123456789abcdef';
const MRTR_SECRET = 'file-mrtr-secret-never-in-a-child';
const HANDED = 'handed-to-the-child-on-purpose';
const dir = tempDir('mcp-gw-file-secrets-e2e-');
let gateway: RunningGateway;

before(async () => {
  const file = (name: string, contents: string): string => {
    writeFileSync(path.join(dir, name), `${contents}\n`);
    return path.join(dir, name);
  };
  const raw = {
    listen: { port: 0 },
    servers: {
      everything: { ...everything, inheritEnv: ['*'], env: { HANDED_SECRET: `\${file:${file('handed', HANDED)}}` } },
    },
    mrtr: { secret: `\${file:${file('mrtr', MRTR_SECRET)}}` },
    auth: { apiKeys: [{ key: `\${file:${file('key', API_KEY)}}`, principal: 'alice' }] },
  };
  gateway = await startGateway(parseConfig(raw, 'test', ROOT), silentLog);
  assert.ok(
    await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000),
    'server-everything ready',
  );
});

after(async () => {
  await gateway?.close();
});

test('a child sees the file secret its own env: names, and not those the config read for itself', async () => {
  const body = request('tools/call', { name: 'get-env', arguments: {} });
  const answer = await send(`${gateway.url}/servers/everything/mcp`, body, { authorization: `Bearer ${API_KEY}` });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const text = JSON.stringify(answer.body.result);
  assert.match(
    text,
    new RegExp(`HANDED_SECRET[^,]*${HANDED}`),
    'the secret handed on purpose, its trailing newline trimmed',
  );
  assert.ok(!text.includes(API_KEY), 'the API key read from a file reached the child');
  assert.ok(!text.includes(MRTR_SECRET), 'mrtr.secret read from a file reached the child');
});

test('the API key read from a file authenticates; another key does not', async () => {
  const body = request('tools/list');
  assert.equal(
    (await send(`${gateway.url}/servers/everything/mcp`, body, { authorization: `Bearer ${API_KEY}` })).status,
    200,
  );
  assert.equal(
    (
      await send(`${gateway.url}/servers/everything/mcp`, body, {
        authorization: 'Bearer not-the-key-0123456789abcdef',
      })
    ).status,
    401,
  );
});
