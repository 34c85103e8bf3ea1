// GET /config (issue 36): the running config for operators only, every secret redacted (wherever it stands),
// and which load it came from, moving on with each reload.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, ROOT, startTestGateway } from './harness.js';

const OPERATOR_KEY = `op-${randomBytes(12).toString('hex')}`;
const USER_KEY = `user-${randomBytes(12).toString('hex')}`;
const secrets = {
  MCP_GW_TEST_CURSOR: randomBytes(16).toString('hex'),
  MCP_GW_TEST_UPSTREAM_TOKEN: randomBytes(16).toString('hex'),
  MCP_GW_TEST_CHILD_SECRET: randomBytes(16).toString('hex'),
  MCP_GW_TEST_ODD_PLACE: randomBytes(16).toString('hex'),
};
Object.assign(process.env, secrets);

const servers = {
  local: { ...fixture('modern-server'), env: { CHILD_SECRET: '${MCP_GW_TEST_CHILD_SECRET}', PLAIN: 'visible?' } },
  remote: {
    url: 'https://user:hunter2-password@mcp.example.invalid/mcp?token=abc',
    headers: { Authorization: 'Bearer ${MCP_GW_TEST_UPSTREAM_TOKEN}' },
    required: false,
  },
};
const rest = {
  aggregate: { cursorSecret: '${MCP_GW_TEST_CURSOR}' },
  auth: {
    apiKeys: [
      { key: OPERATOR_KEY, principal: 'op' },
      { key: USER_KEY, principal: 'user' },
    ],
    operators: { ids: ['op'] },
  },
  // A secret in a key no rule knows as secret: redacted because it came from a variable.
  profiles: { view: { describe: { local__echo: 'uses ${MCP_GW_TEST_ODD_PLACE}' } } },
};

let gateway: RunningGateway;
before(async () => {
  gateway = await startTestGateway(servers, {}, rest);
});
after(async () => {
  await gateway?.close();
  for (const name of Object.keys(secrets)) delete process.env[name];
});

const get = (key?: string) =>
  fetch(`${gateway.url}/config`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

test('only operators read /config: no credentials 401, a caller outside auth.operators 403', async () => {
  assert.equal((await get()).status, 401);
  const other = await get(USER_KEY);
  assert.equal(other.status, 403);
  assert.match((await other.json()).error.message, /user is not among auth\.operators/);
});

test('the effective config, with every secret redacted wherever it stands', async () => {
  const answer = await get(OPERATOR_KEY);
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get('cache-control'), 'no-store');
  const text = await answer.text();
  for (const secret of [...Object.values(secrets), OPERATOR_KEY, USER_KEY, 'hunter2-password', 'token=abc'])
    assert.ok(!text.includes(secret), `/config shows ${secret}`);
  const { config, load } = JSON.parse(text);
  assert.equal(load.reload, 0);
  assert.ok(Date.parse(load.appliedAt) > 0);
  // What is not secret is there, defaults included: an operator sees what runs.
  assert.equal(config.servers.local.transport, 'stdio');
  assert.equal(
    config.servers.local.timeoutMs,
    parseConfig({ servers: { a: { command: 'x' } } }, 't', ROOT).servers.a!.timeoutMs,
  );
  assert.equal(config.servers.local.env.CHILD_SECRET, '(redacted)');
  assert.equal(config.servers.local.env.PLAIN, '(redacted)', 'every env value a child gets is treated as secret');
  assert.equal(config.servers.remote.headers.Authorization, '(redacted)');
  assert.equal(new URL(config.servers.remote.url).hostname, 'mcp.example.invalid');
  assert.equal(config.aggregate.cursorSecret, '(redacted)');
  assert.deepEqual(
    config.auth.apiKeys.map((k: { principal: string; sha256: string }) => [k.principal, k.sha256]),
    [
      ['op', '(redacted)'],
      ['user', '(redacted)'],
    ],
  );
  assert.deepEqual(config.auth.operators, { ids: ['op'], groups: [] });
  assert.equal(config.profiles.view.describe.local__echo, '(redacted)');
});

test('a reload shows: the next load, and the config it applied', async () => {
  const next = parseConfig(
    { listen: { port: 0 }, servers, ...rest, auth: { ...rest.auth, operators: { ids: ['op'], groups: ['admins'] } } },
    'test',
    ROOT,
  );
  await gateway.reload(next);
  const { config, load } = await (await get(OPERATOR_KEY)).json();
  assert.equal(load.reload, 1);
  assert.deepEqual(config.auth.operators.groups, ['admins']);
});
