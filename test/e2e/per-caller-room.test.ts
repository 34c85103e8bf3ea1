// maxCallers holds under concurrent arrivals (issue 45 item 4): with maxCallers 3, one caller's idle child and
// three newcomers arriving at once, no more than three children ever run. The children are stubborn (they
// ignore stdin closing and SIGTERM), so the idle one takes its whole stop ladder to go: a newcomer's child
// started before it exited would make four, which the process-tree sampling below would see.
// And a perCaller server's tool is routed on /mcp with no list first: its lists are each caller's own, so
// they are read as the caller (a fresh replica, a restart).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { request, ROOT, send, until } from './harness.js';
import { alive, childrenRunning } from '../processes.js';

const CALLERS = ['idle', 'bob', 'carol', 'dave'] as const;
type Who = (typeof CALLERS)[number];
const keyOf = (who: Who) => `${who}-key-0123456789abcdef`;
const FIXTURE = 'test/fixtures/faulty-server.mjs';
let gateway: RunningGateway;

before(async () => {
  const raw = {
    listen: { port: 0 },
    servers: {
      own: {
        command: process.execPath,
        args: [FIXTURE],
        cwd: ROOT,
        era: 'modern',
        env: { FAULT_STUBBORN: '1' },
        perCaller: true,
        maxCallers: 3,
        shutdownGraceMs: 500,
      },
    },
    auth: { apiKeys: CALLERS.map((who) => ({ key: keyOf(who), principal: who })) },
  };
  gateway = await startGateway(parseConfig(raw, 'test', ROOT), silentLog);
  assert.ok(await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000), 'ready');
});

after(async () => {
  await gateway?.close();
});

async function pidOf(who: Who): Promise<number> {
  const body = request('tools/call', { name: 'pid', arguments: {} });
  const answer = await send(`${gateway.url}/servers/own/mcp`, body, { authorization: `Bearer ${keyOf(who)}` });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return Number(answer.body.result.content[0].text);
}

test('maxCallers 3, an idle child and three callers at once: never more than three children', async () => {
  const idle = await pidOf('idle');
  let most = 0;
  const sample = setInterval(() => {
    most = Math.max(most, childrenRunning(FIXTURE).length);
  }, 5);
  try {
    const pids = await Promise.all([pidOf('bob'), pidOf('carol'), pidOf('dave')]);
    assert.equal(new Set([idle, ...pids]).size, 4, 'each newcomer answered by a child of their own');
    assert.ok(await until(async () => !alive(idle), 20_000), 'the idle child made room and exited');
    most = Math.max(most, childrenRunning(FIXTURE).length);
    assert.ok(most >= 3, `the sampling saw the children (at most ${most})`);
    assert.ok(most <= 3, `${most} children ran at once with maxCallers 3`);
  } finally {
    clearInterval(sample);
  }
});

test('on /mcp, a perCaller tool is called by name with no list first (the lists are read as the caller)', async () => {
  const body = request('tools/call', { name: 'own__pid', arguments: {} });
  const answer = await send(`${gateway.url}/mcp`, body, { authorization: `Bearer ${keyOf('bob')}` });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.match(String(answer.body.result?.content?.[0]?.text), /^\d+$/, JSON.stringify(answer.body));
});
