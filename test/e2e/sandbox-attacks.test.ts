// Issue 47's "Done when", against real bubblewrap: a hostile stdio server (test/fixtures/hostile-server.mjs)
// run sandboxed through the gateway tries every attack of the issue and reports what it got. Every attempt
// must be refused, its allowed work (its read: path, its write: path, its private tmp) must succeed, and the
// gateway and a neighbouring child keep serving. A bare copy of the same server (sandbox: false) runs the
// same reads and connects first, so a test that passes only because an attack was aimed wrong fails there.
// Its one allowed host (a local listener standing in for it) is reached through the sandbox's proxy, as a
// client that honours HTTPS_PROXY reaches it; the proxy refuses every other. The fork attempt asks for
// 10,000 processes but the fixture stops at the test's own bound (1,000), so a broken sandbox cannot take
// the machine down; the sandbox's own limit (processes: 64) must stop it first.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { sandboxSkip } from '../sandbox-host.js';
import { tempDir } from '../temp.js';
import { request, ROOT, send, textOf, until } from './harness.js';

const skip = await sandboxSkip(ROOT);

const CANARY = {
  config: 'config-canary-4f1e',
  ssh: 'ssh-key-canary-77c0',
  gatewayEnv: 'gateway-env-canary-31d5',
  neighbour: 'neighbour-canary-c8e6',
};
const FIXTURE = path.join(ROOT, 'test/fixtures/hostile-server.mjs');
const MiB = 1024 * 1024;
let dir: string;
let home: string;
let gateway: RunningGateway;
let listener: net.Server;
let listenerPort: number;
let allowedListener: net.Server;
let allowedPort: number;
const savedHome = process.env.HOME;

function hostile(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [FIXTURE], cwd: dir, era: 'modern', ...extra };
}

before(async () => {
  if (skip) return;
  dir = tempDir('sandbox-attacks-');
  chmodSync(dir, 0o755); // a root gateway's children run as nobody, who must reach their cwd
  writeFileSync(path.join(dir, 'gateway.config.yaml'), `# ${CANARY.config}\n`);
  mkdirSync(path.join(dir, 'allowed'));
  writeFileSync(path.join(dir, 'allowed/data.txt'), 'allowed-content');
  home = tempDir('sandbox-home-'); // the gateway's home, outside the child's cwd as a real one is
  mkdirSync(path.join(home, '.ssh'));
  writeFileSync(path.join(home, '.ssh/id_ed25519'), CANARY.ssh);
  mkdirSync(path.join(dir, 'out'));
  if (process.getuid?.() === 0) chownSync(path.join(dir, 'out'), 65534, 65534);
  process.env.HOME = home;
  process.env.GATEWAY_CANARY = CANARY.gatewayEnv;
  // Stands in for a host not on the child's list (and for Redis): reachable from the host's loopback.
  listener = net.createServer((socket) => socket.on('error', () => {}).end('hello'));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerPort = (listener.address() as net.AddressInfo).port;
  // Stands in for the one host on the child's list, reached through the sandbox's proxy.
  allowedListener = net.createServer((socket) => socket.on('error', () => {}).end('allowed-host'));
  await new Promise<void>((resolve) => allowedListener.listen(0, '127.0.0.1', resolve));
  allowedPort = (allowedListener.address() as net.AddressInfo).port;
  const raw = {
    listen: { port: 0 },
    sandbox: { memoryBytes: 256 * MiB, processes: 64, openFiles: 256, read: ['allowed', path.dirname(FIXTURE)] },
    servers: {
      hostile: hostile({ sandbox: { write: ['out'], network: { allow: [`127.0.0.1:${allowedPort}`] } } }),
      neighbour: hostile({ env: { NEIGHBOUR_SECRET: CANARY.neighbour } }),
      bare: hostile({ sandbox: false }),
      shell: hostile({ args: [FIXTURE, '$(touch pwned)', '`touch pwned`', '; touch pwned', 'a\'b"c', '*'] }),
    },
    credentials: { key: 'k'.repeat(32), file: 'credentials.json' },
  };
  gateway = await startGateway(parseConfig(raw, path.join(dir, 'gateway.config.yaml'), dir), silentLog);
  assert.ok(await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000), 'ready');
});

after(async () => {
  await gateway?.close();
  listener?.close();
  allowedListener?.close();
  process.env.HOME = savedHome;
  delete process.env.GATEWAY_CANARY;
});

async function call(server: string, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const answer = await send(`${gateway.url}/servers/${server}/mcp`, request('tools/call', { name, arguments: args }));
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return JSON.parse(textOf(answer));
}

/** The reads and connects both servers try; `outside` adds the cloud metadata endpoint (sandboxed only). */
function attacks(outside = false): Record<string, unknown> {
  const port = new URL(gateway.url).port;
  return {
    read: {
      config: path.join(dir, 'gateway.config.yaml'),
      credentials: path.join(dir, 'credentials.json'),
      ssh: path.join(home, '.ssh/id_ed25519'),
      shadow: '/etc/shadow',
      gatewayEnviron: `/proc/${process.pid}/environ`,
      allowed: path.join(dir, 'allowed/data.txt'),
    },
    environs: true,
    connect: {
      gateway: `127.0.0.1:${port}`,
      redis: `127.0.0.1:${listenerPort}`,
      // Tests reach nothing beyond loopback: only a sandboxed child, with no route out, tries this one.
      ...(outside && { metadata: '169.254.169.254:80' }),
    },
  };
}

test('the bare control reads every secret and reaches the listener (so the attacks are aimed right)', {
  skip,
}, async () => {
  const got = await call('bare', 'attack', attacks());
  const seen = JSON.stringify(got);
  for (const canary of [CANARY.config, CANARY.ssh, CANARY.neighbour])
    assert.ok(seen.includes(canary), `bare reads ${canary}`);
  assert.equal(got.connect.redis.ok, true, 'bare reaches the listener');
  assert.equal(got.connect.gateway.ok, true, 'bare reaches the gateway');
});

test('a sandboxed child is refused every attack and keeps its allowed work', { skip }, async () => {
  const marker = `mine-${process.pid}.txt`;
  const got = await call('hostile', 'attack', {
    ...attacks(true),
    write: {
      cwd: path.join(dir, 'evil.txt'),
      etc: '/etc/evil-sandbox-test',
      allowed: path.join(dir, 'allowed/evil.txt'),
      tmp: `/tmp/${marker}`,
      out: path.join(dir, 'out/ok.txt'),
    },
    proxy: {
      allowed: `127.0.0.1:${allowedPort}`,
      other: `127.0.0.1:${listenerPort}`,
      gateway: `127.0.0.1:${new URL(gateway.url).port}`,
      metadata: '169.254.169.254:80',
    },
    fork: { attempts: 10_000, cap: 1_000 },
    allocBytes: 1024 * MiB,
  });
  const seen = JSON.stringify(got);
  for (const [what, canary] of Object.entries(CANARY)) assert.ok(!seen.includes(canary), `${what} does not leak`);
  for (const what of ['config', 'credentials', 'shadow']) {
    const read = got.read[what];
    assert.ok(!read.ok || read.text === '', `${what}: ${JSON.stringify(read)}`);
  }
  assert.equal(got.read.ssh.ok, false, 'no ~/.ssh');
  assert.equal(got.read.gatewayEnviron.ok, false, 'the gateway is not in its /proc');
  assert.ok(Object.keys(got.environs).length <= 3, `its /proc shows only its own: ${Object.keys(got.environs)}`);
  assert.deepEqual(got.read.allowed, { ok: true, text: 'allowed-content' }, 'its read: path is read');
  for (const what of ['cwd', 'etc', 'allowed']) assert.equal(got.write[what].ok, false, `no write to ${what}`);
  assert.ok(!existsSync(path.join(dir, 'evil.txt')) && !existsSync(path.join(dir, 'allowed/evil.txt')));
  assert.equal(got.write.tmp.ok, true, 'its private tmp is writable');
  assert.ok(!existsSync(`/tmp/${marker}`), 'and private: nothing reaches the host /tmp');
  assert.equal(got.write.out.ok, true, 'its write: path is writable');
  assert.ok(existsSync(path.join(dir, 'out/ok.txt')), 'and the file is on the host');
  for (const [what, outcome] of Object.entries(got.connect as Record<string, { ok: boolean }>))
    assert.equal(outcome.ok, false, `no connection to ${what}`);
  assert.deepEqual(got.proxy.allowed, { ok: true, text: 'allowed-host' }, 'its allowed host, through the proxy');
  for (const what of ['other', 'gateway', 'metadata'])
    assert.match(got.proxy[what].error ?? '', /403/, `the proxy refuses ${what}: ${JSON.stringify(got.proxy[what])}`);
  assert.ok(got.fork.error && got.fork.started < 64, `fork stopped by processes: 64: ${JSON.stringify(got.fork)}`);
  assert.equal(got.alloc.ok, false, `allocation past memoryBytes fails: ${JSON.stringify(got.alloc)}`);
  assert.equal(got.env.HOME, '/tmp/home', 'a private home');
  assert.equal(got.env.MCP_SANDBOX_DATA, '/tmp/data', 'its data folder named in its environment');
  assert.equal(got.env.GATEWAY_CANARY, undefined, "none of the gateway's environment");
});

test('after the attacks the gateway and the other children keep serving', { skip }, async () => {
  const neighbour = await call('neighbour', 'argv');
  assert.deepEqual(neighbour, []);
  const hostileAgain = await call('hostile', 'argv');
  assert.deepEqual(hostileAgain, []);
  assert.equal((await fetch(`${gateway.url}/readyz`)).status, 200);
});

test('config arguments reach the sandboxed child verbatim, never through a shell', { skip }, async () => {
  const argv = await call('shell', 'argv');
  assert.deepEqual(argv, ['$(touch pwned)', '`touch pwned`', '; touch pwned', 'a\'b"c', '*']);
  assert.ok(!existsSync(path.join(dir, 'pwned')));
});

test("/config, the status page and the metrics show each server's sandbox, the host's tier, its refusals", {
  skip,
}, async () => {
  const config = await (await fetch(`${gateway.url}/config`)).json();
  const hostileShown = JSON.stringify(config).includes(`"write":["${path.join(dir, 'out')}"]`);
  assert.ok(hostileShown, JSON.stringify(config).slice(0, 800));
  const status = await (await fetch(`${gateway.url}/status.json`)).json();
  const row = (name: string) => status.upstreams.find((u: { name: string }) => u.name === name);
  assert.equal(
    row('hostile').sandbox,
    `full tier · seccomp · network: 127.0.0.1:${allowedPort} · 256 MiB · 64 processes · 256 files`,
  );
  assert.equal(row('bare').sandbox, 'off');
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  const refused = /^mcp_gateway_sandbox_refused_total\{server="hostile",kind="host"\} (\d+)$/m.exec(metrics);
  assert.ok(refused && Number(refused[1]) >= 3, "the proxy's three refusals are counted");
});
