// A rolling restart behind a real load balancer: Debian's HAProxy on deploy/haproxy.cfg (its backends pointed
// at this machine), the Redis on 127.0.0.1:6379, three gateway processes (the CLI), and 16 clients calling a
// tool without pause while each replica in turn gets SIGTERM, drains, and starts again. No call may fail.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { launchGateway, type ChildGateway } from './child-gateway.js';
import { read } from './deploy-helpers.js';
import { headersFor, request, ROOT, until } from './harness.js';
import { freePort } from './own-redis.js';
import { haproxyBinary, sharedRedis } from '../services.js';

const CLIENTS = 16;
const DRAIN_DELAY_MS = 1500;
const needs = [haproxyBinary('a rolling restart behind HAProxy'), await sharedRedis('a rolling restart behind HAProxy')];
const SKIP = needs.map((n) => n.skip).find((reason) => reason !== false) ?? false;

const tmp = mkdtempSync(path.join(tmpdir(), 'mcp-gw-rolling-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** deploy/haproxy.cfg with its listener and backends on loopback, checks every 300 ms, and a CSV stats page. */
function haproxyConfig(listen: number, stats: number, backends: number[]): string {
  const text = read('deploy/haproxy.cfg')
    .replace(/^resolvers docker\n(?:[ \t]+.*\n)+/m, '')
    .replace(/ resolvers docker/, '')
    .replace(/\binter 1s\b/, 'inter 300ms')
    .replace(/^\s*bind :8080$/m, `    bind 127.0.0.1:${listen}`)
    .replace(/^\s*server gateway(\d) gateway\d:8080$/gm, (_line, n: string) => `    server gateway${n} 127.0.0.1:${backends[Number(n) - 1]}`)
    .replace(/^\s*log stdout.*$/m, '');
  assert.doesNotMatch(text, /gateway\d:8080|resolvers/, 'the test could not point deploy/haproxy.cfg at this machine');
  return `${text}\nlisten stats\n    bind 127.0.0.1:${stats}\n    stats enable\n    stats uri /stats\n`;
}

/** One replica's config: shared Redis and secrets, its own port and internal URL, one stdio server. */
function replicaConfig(port: number, shared: Record<string, string>): string {
  const file = path.join(tmp, `replica-${port}.yaml`);
  writeFileSync(file, JSON.stringify({
    listen: { host: '127.0.0.1', port, drainDelayMs: DRAIN_DELAY_MS, drainMs: 10_000 },
    aggregate: { cursorSecret: shared.secret },
    cache: { store: 'redis', url: 'redis://127.0.0.1:6379', keyPrefix: shared.prefix, contextSecret: shared.secret },
    mrtr: { secret: shared.secret, internalUrl: `http://127.0.0.1:${port}` },
    legacyClients: { sessionSecret: shared.secret },
    servers: { s: { command: process.execPath, args: [path.join(ROOT, 'test/fixtures/synthetic-server.mjs')], env: { SERVER_ID: `r${port}` } } },
  }));
  return file;
}

/** The state HAProxy gives each backend server (UP, DOWN, …), from its CSV stats. */
async function backendStates(stats: number): Promise<Record<string, string>> {
  const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
  const rows = csv.split('\n').map((line) => line.split(','));
  const status = rows[0]!.indexOf('status');
  return Object.fromEntries(rows.filter((row) => row[0] === 'gateways' && row[1]!.startsWith('gateway')).map((row) => [row[1]!, row[status]!]));
}

test('16 clients calling through HAProxy while every replica restarts in turn: 0 failed calls', { skip: SKIP, timeout: 180_000 }, async (t) => {
  for (const need of needs) need.check();
  const shared = { secret: randomBytes(24).toString('hex'), prefix: `mcp-gateway-rolling-${randomBytes(4).toString('hex')}:` };
  const ports = [await freePort(), await freePort(), await freePort()];
  const files = ports.map((port) => replicaConfig(port, shared));
  const replicas: ChildGateway[] = [];
  let haproxy: ChildProcess | undefined;
  try {
    for (const [i, port] of ports.entries()) replicas.push(await launchGateway(files[i]!, port));
    const [front, stats] = [await freePort(), await freePort()];
    writeFileSync(path.join(tmp, 'haproxy.cfg'), haproxyConfig(front, stats, ports));
    haproxy = spawn('haproxy', ['-db', '-f', path.join(tmp, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let haproxyLog = '';
    haproxy.stderr!.setEncoding('utf8').on('data', (chunk: string) => (haproxyLog = (haproxyLog + chunk).slice(-4000)));
    const allUp = async () => Object.values(await backendStates(stats).catch(() => ({}))).filter((s) => s === 'UP').length === 3;
    assert.ok(await until(allUp, 20_000, 100), `HAProxy did not see three replicas up:\n${haproxyLog}`);

    // The load: each client calls, waits for the answer, and calls again, until told to stop.
    const endpoint = `http://127.0.0.1:${front}/servers/s/mcp`;
    const failures: string[] = [];
    let succeeded = 0;
    let running = true;
    const client = async (n: number) => {
      for (let i = 0; running; i++) {
        const call = request('tools/call', { name: 'tool-0', arguments: { text: `${n}-${i}` } });
        try {
          const response = await fetch(endpoint, { method: 'POST', headers: headersFor(call), body: JSON.stringify(call) });
          const body = await response.json();
          if (response.status === 200 && body.result?.content?.[0]?.text?.endsWith(`: ${n}-${i}`)) succeeded++;
          else failures.push(`${response.status} ${JSON.stringify(body).slice(0, 200)}`);
        } catch (error) {
          failures.push(`${(error as Error).message}: ${String((error as { cause?: unknown }).cause)}`);
        }
      }
    };
    const load = Array.from({ length: CLIENTS }, (_, n) => client(n));
    const progress: number[] = [];
    for (const [i, port] of ports.entries()) {
      const before = succeeded;
      const started = Date.now();
      await replicas[i]!.stop(); // SIGTERM; resolves when the process has exited
      const stopped = Date.now();
      replicas[i] = await launchGateway(files[i]!, port);
      assert.ok(await until(allUp, 20_000, 100), `HAProxy did not take gateway${i + 1} back:\n${haproxyLog}`);
      progress.push(succeeded - before);
      t.diagnostic(`gateway${i + 1}: drained and exited in ${stopped - started} ms, back in the pool ${Date.now() - stopped} ms later; ${succeeded - before} calls meanwhile`);
    }
    running = false;
    await Promise.all(load);
    t.diagnostic(`${succeeded} calls answered, ${failures.length} failed`);
    assert.deepEqual(failures.slice(0, 10), [], `${failures.length} of ${failures.length + succeeded} calls failed`);
    for (const [i, calls] of progress.entries()) assert.ok(calls > 0, `calls went on while gateway${i + 1} restarted`);
  } finally {
    haproxy?.kill('SIGTERM');
    await Promise.all(replicas.map((replica) => replica.stop()));
  }
});
