// instances: a real pool of CPU-bound fixture children (bench/cpu-server.mjs, which answers its pid) behind
// the gateway: requests spread over the children, a killed child is skipped and restarted, a list change
// announced by every child drops the server's cached lists once, /readyz, /status.json and /metrics show
// each child, and the config refuses what it cannot serve safely.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { childCount } from '../../src/upstream-factory.js';
import { eventually, fixture, META, post, request, ROOT, startTestGateway } from './harness.js';
import { scaled } from '../timing.js';
import { tempDir } from '../temp.js';

const dir = tempDir('child-pools-');
const changeFile = path.join(dir, 'change');
const announceLog = path.join(dir, 'announced');
writeFileSync(changeFile, 'start\n');
writeFileSync(announceLog, '');

const pooled = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: ['bench/cpu-server.mjs'],
  cwd: ROOT,
  env: { BURN_MS: '5', CHANGE_FILE: changeFile, ANNOUNCE_LOG: announceLog },
  era: 'modern',
  instances: 2,
  ...extra,
});

describe('a pool of two children', () => {
  let gateway: RunningGateway;
  let url: string;
  const callTool = async (name: string, args: Record<string, unknown> = {}) => {
    const answer = await post(url, request('tools/call', { name, arguments: args }));
    return answer.body;
  };
  const pidOf = async (name = 'pid', args: Record<string, unknown> = {}): Promise<number> => {
    const body = await callTool(name, args);
    assert.ok(body.result, `the call succeeded: ${JSON.stringify(body)}`);
    return Number(body.result.content[0].text);
  };
  const childStates = () => gateway.upstreams.get('pool')!.status().children!;

  before(async () => {
    gateway = await startTestGateway({ pool: pooled() });
    url = `${gateway.url}/servers/pool/mcp`;
    await eventually(() => childStates().every((child) => child.state === 'ready'), 20_000);
  });
  after(() => gateway?.close());

  test('concurrent calls are spread over both children', async () => {
    // Each call burns 150 ms of wall-clock time, so all 40 are sent while the first ones are still running
    // and both children work at the same pace however loaded the machine is. With 5 ms calls a child that
    // the machine starved finished fewer, and rightly got fewer (CI once saw 8 of 40).
    const pids = await Promise.all(Array.from({ length: 40 }, () => pidOf('burn', { ms: 150 })));
    const served = new Map<number, number>();
    for (const pid of pids) served.set(pid, (served.get(pid) ?? 0) + 1);
    assert.equal(served.size, 2, `two children served: ${JSON.stringify([...served])}`);
    for (const [pid, count] of served)
      assert.ok(count >= 15, `child ${pid} served ${count} of 40: the least busy child gets each call`);
  });

  test('/readyz and /status.json show each child', async () => {
    const ready = await fetch(`${gateway.url}/readyz`);
    assert.equal(ready.status, 200);
    const body = await ready.json();
    assert.deepEqual(body.upstreams, { pool: 'ready' });
    assert.deepEqual(body.children, { pool: ['ready', 'ready'] });
    const status = await (await fetch(`${gateway.url}/status.json`)).json();
    assert.equal(status.upstreams[0].children, '#0 ready, #1 ready');
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    assert.match(metrics, /mcp_gateway_upstream_child_state\{server="pool",child="1",state="ready"\} 1/);
    assert.match(metrics, /mcp_gateway_upstream_child_restarts_total\{server="pool",child="0"\} 0/);
  });

  test('a list change announced by every child drops the cached lists once', async () => {
    const list = async () => (await post(url, request('tools/list'))).body.result._meta;
    const first = await list();
    assert.deepEqual(await list(), first, 'the second tools/list comes from the cache');
    const invalidations = () => gateway.cache.stats.invalidations;
    const before = invalidations();
    writeFileSync(announceLog, '');
    await callTool('change');
    // Both children see the file change and announce it.
    await eventually(() => readFileSync(announceLog, 'utf8').trim().split('\n').filter(Boolean).length === 2, 5_000);
    await eventually(() => invalidations() > before, 2_000);
    // The second announcement may still be on its way through the gateway: give it a moment to (wrongly) count.
    await new Promise((resolve) => setTimeout(resolve, scaled(200)));
    assert.equal(invalidations() - before, 1, 'two announcements, one drop');
    const third = await list();
    assert.notDeepEqual(third, first, 'the list was read again from a child');
  });

  test('a killed child is skipped while its sibling serves, then restarted', async () => {
    const pids = new Set(await Promise.all(Array.from({ length: 10 }, () => pidOf('burn'))));
    assert.equal(pids.size, 2);
    const [victim] = [...pids];
    process.kill(victim!, 'SIGKILL');
    await eventually(() => childStates().some((child) => child.state !== 'ready'), 5_000);
    const pool = gateway.upstreams.get('pool')!.status();
    assert.equal(pool.state, 'ready', 'one child ready keeps the server ready');
    const during = await Promise.all(Array.from({ length: 10 }, () => pidOf('burn')));
    assert.ok(!during.includes(victim!), 'no call reached the dead child');
    await eventually(() => childStates().every((child) => child.state === 'ready'), 10_000);
    assert.equal(
      childStates().reduce((sum, child) => sum + child.restarts, 0),
      1,
      'the killed child was restarted',
    );
    const afterRestart = new Set(await Promise.all(Array.from({ length: 20 }, () => pidOf('burn'))));
    assert.equal(afterRestart.size, 2, 'both children serve again');
    assert.ok(!afterRestart.has(victim!), 'the restarted child is a new process');
  });
});

describe('a pool of a 2025 server (era: legacy): held calls resume on the child that holds them', () => {
  let gateway: RunningGateway;
  let url: string;
  before(async () => {
    gateway = await startTestGateway({ legacy: fixture('legacy-server', { era: 'legacy', instances: 2 }) });
    url = `${gateway.url}/servers/legacy/mcp`;
    await eventually(
      () =>
        gateway.upstreams
          .get('legacy')!
          .status()
          .children!.every((child) => child.state === 'ready'),
      30_000,
    );
  });
  after(() => gateway?.close());

  test(
    'two calls of two questions each, one held on each child, answered in crossed order, complete with their own ' +
      'answers',
    async () => {
      const capabilities = { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
      const first = (topic: string) => ({
        jsonrpc: '2.0',
        id: `${topic}-1`,
        method: 'tools/call',
        params: { name: 'ask-twice', arguments: { topic }, _meta: capabilities },
      });
      const retry = (base: ReturnType<typeof first>, round: number, requestState: string, value: string) => ({
        ...base,
        id: `${base.params.arguments.topic}-${round + 1}`,
        params: {
          ...base.params,
          requestState,
          inputResponses: { [`elicitation-${round}`]: { action: 'accept', content: { value } } },
        },
      });
      const topics = ['a', 'b'];
      const firsts = topics.map(first);
      // Each call holds a child's request open. (One per child: a 2025 stdio child that asks while two calls are in
      // flight cannot say for which, bridge/legacy/legacy-line.ts.)
      const ones = await Promise.all(firsts.map((body) => post(url, body)));
      const inFlight = gateway.upstreams
        .get('legacy')!
        .status()
        .children!.map((child) => child.inFlight);
      assert.deepEqual(inFlight, [1, 1], 'one held call on each child');
      const twos = await Promise.all(
        ones
          .reverse()
          .map((one, i) =>
            post(
              url,
              retry(
                firsts[topics.length - 1 - i]!,
                1,
                one.body.result.requestState,
                `${topics[topics.length - 1 - i]}1`,
              ),
            ),
          ),
      );
      twos.reverse();
      const results = await Promise.all(
        twos.map((two, i) => post(url, retry(firsts[i]!, 2, two.body.result.requestState, `${topics[i]}2`))),
      );
      for (const [i, result] of results.entries()) {
        const text = JSON.parse(result.body.result.content[0].text);
        assert.deepEqual(text, {
          first: { action: 'accept', content: { value: `${topics[i]}1` } },
          second: { action: 'accept', content: { value: `${topics[i]}2` } },
        });
      }
    },
  );
});

describe('instances in the config', () => {
  const problems = (server: Record<string, unknown>): string[] => {
    try {
      parseConfig({ servers: { s: server } }, 'test.yaml', ROOT, {});
      return [];
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      return error.problems;
    }
  };
  const base = { command: 'node', args: ['server.js'] };

  test('a pool of a server whose era is not given is refused, naming both fixes', () => {
    const [problem, ...rest] = problems({ ...base, instances: 2 });
    assert.equal(rest.length, 0);
    assert.match(problem!, /^servers\.s\.instances: 2 /);
    assert.match(problem!, /era: modern/);
    assert.match(problem!, /era: legacy/);
    assert.match(problems({ ...base, instances: 'auto' })[0]!, /servers\.s\.instances: auto .*era: modern/);
  });

  test('era: modern or an explicit era: legacy may be pooled; one child needs no era', () => {
    assert.deepEqual(problems({ ...base, instances: 3, era: 'modern' }), []);
    assert.deepEqual(problems({ ...base, instances: 3, era: 'legacy' }), []);
    assert.deepEqual(problems({ ...base, instances: 1 }), []);
    assert.deepEqual(problems({ ...base, instances: '4', era: 'modern' }), [], 'a number from ${VAR} is a number');
  });

  test('bad values name what is valid', () => {
    for (const bad of [0, -1, 1.5, 'many', true]) {
      const [problem] = problems({ ...base, instances: bad, era: 'modern' });
      assert.match(
        problem ?? '',
        /^servers\.s\.instances: .*(1 or more|at least 1|"auto")/,
        `instances: ${JSON.stringify(bad)} → ${problem}`,
      );
    }
  });

  test('instances defaults to one child; auto is one per core', () => {
    const config = parseConfig(
      { servers: { s: { ...base, era: 'modern' }, t: { ...base, era: 'modern', instances: 'auto' } } },
      'test.yaml',
      ROOT,
      {},
    );
    const [s, t] = [config.servers.s!, config.servers.t!];
    assert.ok(s.transport === 'stdio' && t.transport === 'stdio');
    assert.equal(s.instances, 1);
    assert.equal(childCount(t.instances), availableParallelism());
  });

  test('instances is a stdio setting: a remote server refuses it', () => {
    const [problem] = problems({ url: 'http://127.0.0.1:9/mcp', instances: 2 });
    assert.match(problem ?? '', /unknown key 'instances'/);
  });
});
