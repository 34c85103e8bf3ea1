// The per-caller keys (issue 34): perCaller, idleMs, maxCallers, secrets, with the load errors that name
// what to add or change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/config.js';
import { BASE, configProblems } from '../config-problems.js';

const KEY = 'k'.repeat(32);
const AUTH = { apiKeys: [{ key: 'alice-key-0123456789abcdef', principal: 'alice' }] };
const GITHUB = {
  command: 'npx',
  args: ['-y', '@modelcontextprotocol/server-github'],
  perCaller: true,
  secrets: { GITHUB_PERSONAL_ACCESS_TOKEN: { prompt: 'A GitHub token with repo scope' } },
};

test("the issue's example loads, with the defaults: idleMs 10 min, maxCallers 50", () => {
  const config = parseConfig(
    {
      listen: { publicUrl: 'https://gw.example.com' },
      credentials: { key: KEY },
      auth: AUTH,
      servers: { github: GITHUB },
    },
    'test.yaml',
    BASE,
    {},
  );
  const github = config.servers.github!;
  assert.equal(github.transport, 'stdio');
  if (github.transport !== 'stdio') return;
  assert.equal(github.perCaller, true);
  assert.equal(github.idleMs, 600_000);
  assert.equal(github.maxCallers, 50);
  assert.deepEqual(github.secrets, GITHUB.secrets);
});

test('secrets without what they need: each problem names the key to add', () => {
  const found = configProblems({
    servers: { github: { ...GITHUB, perCaller: false, env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'shared' } } },
  });
  assert.ok(
    found.some((p) => p.includes('servers.github.secrets') && p.includes('servers.github.perCaller: true')),
    found.join('\n'),
  );
  assert.ok(
    found.some((p) => p.includes('credentials: { key:')),
    found.join('\n'),
  );
  assert.ok(
    found.some((p) => p.includes('listen.publicUrl')),
    found.join('\n'),
  );
  assert.ok(
    found.some((p) => p.includes('configure auth')),
    found.join('\n'),
  );
  assert.ok(
    found.some(
      (p) => p.includes('servers.github.secrets.GITHUB_PERSONAL_ACCESS_TOKEN') && p.includes('remove it from env'),
    ),
    found.join('\n'),
  );
});

test('maxCallers below 1 and a secret name that is no variable are refused', () => {
  const found = configProblems({
    listen: { publicUrl: 'https://gw.example.com' },
    credentials: { key: KEY },
    auth: AUTH,
    servers: { a: { command: 'x', perCaller: true, maxCallers: 0, secrets: { 'not a var': { prompt: 'p' } } } },
  });
  assert.ok(
    found.some((p) => p.includes('servers.a.maxCallers') && p.includes('at least 1 caller')),
    found.join('\n'),
  );
  assert.ok(
    found.some((p) => p.includes('named by the environment variable')),
    found.join('\n'),
  );
});
