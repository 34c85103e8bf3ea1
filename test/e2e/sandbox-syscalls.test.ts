// The sandbox's seccomp filter, CPU limit and proxy, against real bubblewrap and the real kernel: a hostile
// Python server (test/fixtures/syscall-server.py, ctypes makes any system call) run sandboxed tries each
// attack in a process of its own: a nested user namespace (the call and util-linux's unshare), ptrace and
// memory reads of a sibling, mount, keyctl, setns, perf_event_open, bpf, userfaultfd. A bare copy
// (sandbox: false) runs the ones that are harmless on the host first, so an attack aimed wrong fails there.
// A server that makes a killing call in its own process, and one that burns processor time past
// cpuSeconds, end; the gateway logs and counts each end, and restarts them as supervision does. Plain-HTTP
// requests through the proxy reach the allowed host only, and a server removed by a reload takes its proxy
// socket and status FIFO with it.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sandboxTier } from '../../bridge/sandbox/probe.js';
import { parseConfig } from '../../src/config/config.js';
import { type RunningGateway, startGateway } from '../../src/gateway.js';
import { recordingLog } from '../recording-log.js';
import { sandboxSkip } from '../sandbox-host.js';
import { tempDir } from '../temp.js';
import { request, ROOT, send, textOf, until } from './harness.js';

const PYTHON = '/usr/bin/python3';
const skip = !existsSync(PYTHON)
  ? `no ${PYTHON} here`
  : (await sandboxSkip(ROOT)) ||
    ((await sandboxTier()).seccomp ? false : `no seccomp filter here: ${(await sandboxTier()).seccompWhy}`);
const FIXTURE = path.join(ROOT, 'test/fixtures/syscall-server.py');
const CPU_SECONDS = 2;
/** Harmless on the host, so the bare control runs them too. */
const CONTROLLED = ['userns', 'userns-tool', 'ptrace-sibling', 'read-sibling-memory', 'keyctl', 'perf_event_open'];
const KILLED = ['bpf', 'userfaultfd'];

const recorded = recordingLog();
let dir: string;
let gateway: RunningGateway;
let web: Server;
let webPort: number;
let other: Server;
let otherPort: number;
let raw: Record<string, any>;

function python(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: PYTHON, args: [FIXTURE], cwd: dir, era: 'modern', ...extra };
}

async function listening(body: string): Promise<[Server, number]> {
  const server = createServer((_request, response) => response.end(`${body}\n`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return [server, (server.address() as AddressInfo).port];
}

before(async () => {
  if (skip) return;
  dir = tempDir('sandbox-syscalls-');
  chmodSync(dir, 0o755); // a root gateway's children run as nobody, who must reach their cwd
  mkdirSync(path.join(dir, 'out'));
  mkdirSync(path.join(dir, 'removable'), { mode: 0o755 });
  if (process.getuid?.() === 0) chownSync(path.join(dir, 'out'), 65534, 65534);
  [web, webPort] = await listening('allowed-web');
  [other, otherPort] = await listening('other-web');
  raw = {
    listen: { port: 0 },
    sandbox: { read: [path.dirname(FIXTURE)], processes: 64 },
    servers: {
      syscalls: python(),
      control: python({ sandbox: false }),
      doomed: python(),
      burner: python({ sandbox: { cpuSeconds: CPU_SECONDS, write: ['out'] } }),
      web: python({ sandbox: { network: { allow: [`127.0.0.1:${webPort}`] } } }),
      removable: python({ cwd: path.join(dir, 'removable'), sandbox: { network: { allow: ['example.org'] } } }),
    },
  };
  gateway = await startGateway(parseConfig(raw, path.join(dir, 'gateway.config.yaml'), dir), recorded.log);
  assert.ok(await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 30_000), 'ready');
});

after(async () => {
  await gateway?.close();
  web?.close();
  other?.close();
});

async function call(server: string, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const answer = await send(`${gateway.url}/servers/${server}/mcp`, request('tools/call', { name, arguments: args }));
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return JSON.parse(textOf(answer));
}

/** The answer to a call the child dies in: the gateway's error, never a result. */
async function callItDiesIn(server: string, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const answer = await send(`${gateway.url}/servers/${server}/mcp`, request('tools/call', { name, arguments: args }));
  return JSON.stringify(answer.body);
}

async function refusedTotal(server: string, kind: string): Promise<number> {
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = new RegExp(`^mcp_gateway_sandbox_refused_total\\{server="${server}",kind="${kind}"\\} (\\d+)$`, 'm');
  return Number(line.exec(metrics)?.[1] ?? 0);
}

test('the bare control gets through every harmless attack (so they are aimed right)', { skip }, async () => {
  const got = await call('control', 'attack', { attacks: [...CONTROLLED, ...KILLED] });
  for (const attack of CONTROLLED) assert.equal(got[attack].ok, true, `${attack}: ${JSON.stringify(got[attack])}`);
  for (const attack of KILLED) assert.equal(got[attack].killed, undefined, `${attack} is not killed bare`);
});

test('a sandboxed child is refused every attack; the worst end the process that tried', { skip }, async () => {
  const got = await call('syscalls', 'attack', { attacks: [...CONTROLLED, 'mount', 'setns', ...KILLED] });
  for (const attack of [...CONTROLLED, 'mount', 'setns'])
    assert.equal(got[attack].ok, false, `${attack} refused: ${JSON.stringify(got[attack])}`);
  for (const attack of ['ptrace-sibling', 'read-sibling-memory', 'keyctl', 'userns'])
    assert.equal(got[attack].error, 'Operation not permitted', `${attack}: ${JSON.stringify(got[attack])}`);
  for (const attack of KILLED) assert.equal(got[attack].killed, 'SIGSYS', `${attack}: ${JSON.stringify(got[attack])}`);
  // The attempts ended only their own processes: the server answers on.
  assert.equal(typeof (await call('syscalls', 'pid')).pid, 'number');
});

test('a child killed by the filter is logged with its name, counted, and restarted, each time', { skip }, async () => {
  for (let round = 1; round <= 2; round++) {
    assert.doesNotMatch(await callItDiesIn('doomed', 'die'), /still alive/);
    assert.ok(await until(async () => (await refusedTotal('doomed', 'syscall')) >= round, 20_000), `count ${round}`);
    // Supervision starts it again, as after any crash.
    assert.ok(await until(async () => (await callItDiesIn('doomed', 'pid')).includes('uid'), 30_000), 'restarted');
  }
  const said = recorded.warnings().filter((message) => message.includes('servers.doomed: a sandboxed child'));
  const killed =
    'servers.doomed: a sandboxed child was refused a system call the sandbox forbids (killed by SIGSYS: seccomp)';
  assert.deepEqual(said, [killed, killed], 'a line for each child it ended');
  assert.equal(await refusedTotal('syscalls', 'syscall'), 0, "an attack in a child's own subprocess is not seen");
});

test('RLIMIT_CPU: a child that burns processor time is stopped at cpuSeconds, logged, restarted', {
  skip,
}, async () => {
  const record = path.join(dir, 'out/cpu.txt');
  const started = Date.now();
  assert.doesNotMatch(await callItDiesIn('burner', 'burn', { record }), /"result"/);
  assert.ok(await until(async () => (await refusedTotal('burner', 'cpu')) >= 1, 30_000), 'counted');
  const ran = Number(readFileSync(record, 'utf8'));
  // Measured: the processor seconds the child had used when last it wrote, against the limit.
  console.log(
    `# cpuSeconds ${CPU_SECONDS}: the child ran ${ran.toFixed(2)} s of CPU (${Date.now() - started} ms wall)`,
  );
  // Never past the hard limit (a second above); the lower bound only says it ran at least half of it.
  assert.ok(ran >= CPU_SECONDS / 2 && ran <= CPU_SECONDS + 1, `ran ${ran} s of CPU under a ${CPU_SECONDS} s limit`);
  assert.ok(
    recorded
      .warnings()
      .some((message) => /servers\.burner: a sandboxed child used its sandbox\.cpuSeconds/.test(message)),
  );
  assert.ok(await until(async () => (await callItDiesIn('burner', 'pid')).includes('uid'), 30_000), 'restarted');
});

test('plain HTTP through the proxy: the allowed host answers, any other gets 403, logged once', { skip }, async () => {
  const got = await call('web', 'fetch', {
    urls: {
      allowed: `http://127.0.0.1:${webPort}/x?y=1`,
      other: `http://127.0.0.1:${otherPort}/`,
      again: `http://127.0.0.1:${otherPort}/again`,
      gateway: `${gateway.url}/readyz`,
    },
  });
  assert.deepEqual(got.allowed, { status: 200, body: 'allowed-web\n' });
  for (const what of ['other', 'again', 'gateway']) assert.equal(got[what].status, 403, JSON.stringify(got[what]));
  assert.ok((await refusedTotal('web', 'host')) >= 3);
  const said = recorded.warnings().filter((message) => message.startsWith('servers.web: refused a connection'));
  assert.equal(said.length, 2, `once per host: ${said}`);
});

test('the gateway and the other children kept serving through it all', { skip }, async () => {
  for (const server of ['syscalls', 'control', 'web']) assert.equal(typeof (await call(server, 'pid')).pid, 'number');
  assert.equal((await fetch(`${gateway.url}/readyz`)).status, 200);
});

test('a server removed by a reload closes its proxy and removes its socket and status FIFO', { skip }, async () => {
  const files = sandboxFilesOf(path.join(dir, 'removable'));
  assert.ok(files.socket && existsSync(files.socket), `its proxy socket: ${JSON.stringify(files)}`);
  assert.ok(files.fifo && existsSync(files.fifo), `its status FIFO: ${JSON.stringify(files)}`);
  const { removable: _, ...kept } = raw.servers;
  await gateway.reload(parseConfig({ ...raw, servers: kept }, path.join(dir, 'gateway.config.yaml'), dir));
  assert.ok(await until(() => !existsSync(files.socket!) && !existsSync(files.fifo!), 20_000), 'both removed');
  assert.ok(!existsSync(path.dirname(files.socket!)), 'and their folders');
});

/** The proxy socket on the command line of the bwrap that runs in `cwd`, and the FIFO its status goes to. */
function sandboxFilesOf(cwd: string): { socket?: string; fifo?: string } {
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const chdir = argv.indexOf('--chdir');
    if (!argv.some((arg) => arg.endsWith('/bwrap')) || chdir < 0 || argv[chdir + 1] !== cwd) continue;
    let fifo: string;
    try {
      fifo = readlinkSync(`/proc/${pid}/fd/4`); // --json-status-fd 4: the FIFO it writes to
    } catch {
      continue; // the sandbox's own init, which bwrap started without it
    }
    return { socket: argv.find((arg) => /mcp-sandbox-proxy-[^/]+\/proxy\.sock$/.test(arg)), fifo };
  }
  return {};
}
