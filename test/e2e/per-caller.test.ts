// perCaller: true (issue 34, item 1) against real children: the dependency-free faulty-server fixture,
// which answers its own pid, holds a call until it is cancelled (hang) and exits on demand. Callers are
// principals by API key: alice, bob and carol call; op reads the operator pages.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { headersFor, post, request, ROOT, until, send } from './harness.js';
import { alive } from '../processes.js';

const KEYS = {
  alice: 'alice-key-0123456789abcdef',
  bob: 'bob-key-0123456789abcdef',
  carol: 'carol-key-0123456789abcdef',
  op: 'op-key-0123456789abcdef',
};
type Who = keyof typeof KEYS;
const faulty = {
  command: process.execPath,
  args: ['test/fixtures/faulty-server.mjs'],
  cwd: ROOT,
  era: 'modern',
  perCaller: true,
};
let gateway: RunningGateway;

before(async () => {
  const raw = {
    listen: { port: 0 },
    servers: {
      // Two callers at most, children kept for the whole file: for identity, room and crashes.
      own: { ...faulty, maxCallers: 2 },
      // Children stopped soon after their last call (long enough for a loaded machine to start two).
      brief: { ...faulty, idleMs: 3000 },
    },
    auth: { apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })), operators: { ids: ['op'] } },
  };
  gateway = await startGateway(parseConfig(raw, 'test', ROOT), silentLog);
  assert.ok(await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000), 'ready');
});

after(async () => {
  await gateway?.close();
});

async function call(server: string, who: Who, name: string, args: Record<string, unknown> = {}) {
  const body = request('tools/call', { name, arguments: args });
  return send(`${gateway.url}/servers/${server}/mcp`, body, { authorization: `Bearer ${KEYS[who]}` });
}

async function pidOf(server: string, who: Who): Promise<number> {
  const answer = await call(server, who, 'pid');
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return Number(answer.body.result.content[0].text);
}

const childrenOf = (server: string) => gateway.upstreams.get(server)!.status().children ?? [];

test('alice and bob each get a child of their own, started on their first call and kept for their next', async () => {
  assert.equal(childrenOf('own').length, 0, 'no child before anyone called');
  const alice = await pidOf('own', 'alice');
  const bob = await pidOf('own', 'bob');
  assert.notEqual(alice, bob, 'distinct children');
  assert.equal(await pidOf('own', 'alice'), alice, "alice's second call reaches her child");
  assert.equal(await pidOf('own', 'bob'), bob);
  assert.equal(childrenOf('own').length, 2);
});

test("one caller's child crashing leaves another's running", async () => {
  const alice = await pidOf('own', 'alice');
  const bob = await pidOf('own', 'bob');
  const crashed = await call('own', 'alice', 'exit', { code: 3 });
  assert.ok('error' in crashed.body, 'the crashed call is answered with an error');
  assert.ok(await until(async () => !alive(alice), 10_000), "alice's child exited");
  assert.equal(await pidOf('own', 'bob'), bob, "bob's child is untouched");
  assert.ok(alive(bob));
  const restarted = await pidOf('own', 'alice');
  assert.notEqual(restarted, alice, "alice's child is restarted for her");
  assert.notEqual(restarted, bob);
});

test(
  'maxCallers full of busy children: a newcomer gets 503 naming the setting; ' + 'once one is idle, it takes its place',
  async () => {
    const alice = await pidOf('own', 'alice');
    const bob = await pidOf('own', 'bob');
    // Both children busy with a call that never ends by itself (`hang`, which honours a cancel): the newcomer
    // is refused while they are busy however slow the machine, and the callers end their calls afterwards.
    const callers = (['alice', 'bob'] as const).map((who) => {
      const controller = new AbortController();
      const body = request('tools/call', { name: 'hang', arguments: {} });
      const headers = { ...headersFor(body), authorization: `Bearer ${KEYS[who]}` };
      const answered = post(`${gateway.url}/servers/own/mcp`, body, headers, { signal: controller.signal });
      return { stop: () => controller.abort(), ended: answered.catch(() => undefined) };
    });
    assert.ok(await until(() => childrenOf('own').every((child) => child.inFlight === 1), 10_000), 'both busy');
    const refused = await call('own', 'carol', 'pid');
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.match(refused.body.error.message, /servers\.own\.maxCallers/);
    assert.equal(refused.body.error.data.setting, 'servers.own.maxCallers');
    assert.ok(refused.headers.get('retry-after'), 'Retry-After sent');
    for (const caller of callers) caller.stop();
    await Promise.all(callers.map((caller) => caller.ended));
    assert.ok(await until(() => childrenOf('own').every((child) => child.inFlight === 0), 10_000), 'both idle again');
    // Alice's child was used less recently than bob's? Both finished; touch bob so alice's is the older.
    assert.equal(await pidOf('own', 'bob'), bob);
    const carol = await pidOf('own', 'carol');
    assert.ok(![alice, bob].includes(carol), 'carol has a child of her own');
    assert.ok(await until(async () => !alive(alice), 10_000), "the least recently used idle child (alice's) stopped");
    assert.ok(alive(bob), "bob's child kept");
    assert.equal(childrenOf('own').length, 2);
  },
);

test('a child with no call for idleMs is stopped; the next call starts a new one', async () => {
  const [alice, bob] = await Promise.all([pidOf('brief', 'alice'), pidOf('brief', 'bob')]);
  assert.notEqual(alice, bob);
  assert.ok(
    await until(async () => childrenOf('brief').length === 0 && !alive(alice) && !alive(bob), 10_000),
    'both stopped after idleMs',
  );
  const again = await pidOf('brief', 'alice');
  assert.notEqual(again, alice);
  assert.equal(childrenOf('brief').length, 1);
});

test("lists are read from the caller's own child and kept for that caller only", async () => {
  const body = request('tools/list');
  const list = async (who: Who) =>
    send(`${gateway.url}/servers/brief/mcp`, body, { authorization: `Bearer ${KEYS[who]}` });
  await until(async () => childrenOf('brief').length === 0, 10_000);
  assert.equal((await list('carol')).status, 200);
  assert.equal(childrenOf('brief').length, 1, "carol's list started her child");
  const bobs = await list('bob');
  assert.equal(bobs.status, 200);
  assert.ok(bobs.body.result.tools.some((tool: { name: string }) => tool.name === 'pid'));
  assert.equal(childrenOf('brief').length, 2, "bob's list came from his own child, not from carol's cached one");
  assert.notEqual(bobs.body.result.cacheScope, 'public');
});

test('health, metrics and the status page count children and never name a caller', async () => {
  await pidOf('own', 'alice');
  await pidOf('own', 'bob').catch(() => undefined);
  const op = { authorization: `Bearer ${KEYS.op}` };
  const ready = await (await fetch(`${gateway.url}/readyz`, { headers: op })).json();
  assert.equal(ready.upstreams.own, 'ready');
  assert.equal(ready.children.own.length, childrenOf('own').length);
  const status = await (await fetch(`${gateway.url}/status.json`, { headers: op })).text();
  const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: op })).text();
  assert.match(metrics, /mcp_gateway_upstream_child_state\{server="own",child="1",state="ready"\} 1/);
  for (const [name, text] of Object.entries({ readyz: JSON.stringify(ready), status, metrics })) {
    for (const who of ['alice', 'bob', 'carol']) assert.ok(!text.includes(who), `${name} names ${who}`);
  }
  assert.match(
    JSON.parse(status).upstreams.find((u: { name: string }) => u.name === 'own').children,
    /#0 ready, #1 ready/,
  );
});
