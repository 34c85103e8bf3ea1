// sandbox: (issue 47) as the loader reads it: the top-level block is every stdio server's default, a
// server's own keys win and `false` runs it bare; paths are relative to the config file's folder; the
// gateway's own files are hidden; and the bubblewrap command line it becomes, with no shell anywhere.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseConfig, type StdioServerConfig } from '../../src/config/config.js';
import { sandboxedLaunch } from '../../bridge/sandbox/bwrap-args.js';
import { allowed } from '../../bridge/sandbox/connect-proxy.js';
import { shortfall, type SandboxPolicy } from '../../bridge/sandbox/policy.js';
import type { SandboxTier } from '../../bridge/sandbox/probe.js';
import { BASE, configProblems } from '../config-problems.js';
import { tempDir } from '../temp.js';

const node = { command: 'node', args: ['server.js'] };

function load(raw: Record<string, unknown>) {
  return parseConfig({ listen: { port: 0 }, ...raw }, 'test.yaml', BASE, {});
}
const policyOf = (raw: Record<string, unknown>, name: string) =>
  (load(raw).servers[name] as StdioServerConfig).sandboxPolicy;

test('no sandbox: anywhere runs every server bare, as before', () => {
  assert.equal(policyOf({ servers: { a: node } }, 'a'), undefined);
});

test("the top-level block is every stdio server's default; a server's keys win; false opts out", () => {
  const raw = {
    sandbox: { read: ['shared'], memoryBytes: 268435456 },
    servers: { a: node, b: { ...node, sandbox: { read: ['own'], processes: 32 } }, c: { ...node, sandbox: false } },
  };
  const a = policyOf(raw, 'a')!;
  assert.deepEqual(a.read, [path.join(BASE, 'shared')], "relative to the config file's folder");
  assert.equal(a.memoryBytes, 268435456);
  assert.deepEqual(a.network, { kind: 'none' }, 'no network by default');
  assert.deepEqual(a.write, []);
  const b = policyOf(raw, 'b')!;
  assert.deepEqual(b.read, [path.join(BASE, 'own')]);
  assert.equal(b.memoryBytes, 268435456, 'the default fills what the server leaves out');
  assert.equal(b.processes, 32);
  assert.equal(policyOf(raw, 'c'), undefined);
});

test('sandbox: true on a server uses the defaults; "*" is every host', () => {
  assert.deepEqual(policyOf({ servers: { a: { ...node, sandbox: true } } }, 'a')?.network, { kind: 'none' });
  const all = { servers: { a: { ...node, sandbox: { network: { allow: ['*'] } } } } };
  assert.deepEqual(policyOf(all, 'a')?.network, { kind: 'all' });
});

test("the gateway's credential store is hidden from every sandboxed child", () => {
  const raw = { sandbox: {}, servers: { a: node }, credentials: { key: 'k'.repeat(32), file: 'store/creds.json' } };
  assert.ok(policyOf(raw, 'a')!.hide.includes(path.join(BASE, 'store/creds.json')));
});

test('mistakes are refused with what to write instead', () => {
  const star = configProblems({ servers: { a: { ...node, sandbox: { network: { allow: ['*', 'x.org'] } } } } });
  assert.match(star.join('\n'), /"\*" already allows every host/);
  const small = configProblems({ sandbox: { memoryBytes: 1000 }, servers: { a: node } });
  assert.match(small.join('\n'), /sandbox\.memoryBytes.*at least 67108864/);
  const typo = configProblems({ servers: { a: { ...node, sandbox: { netwrok: {} } } } });
  assert.match(typo.join('\n'), /netwrok/);
});

const fullTier: SandboxTier = {
  name: 'full',
  bwrap: '/usr/bin/bwrap',
  prlimit: '/usr/bin/prlimit',
  setpriv: '/usr/bin/setpriv',
  socat: '/usr/bin/socat',
  namespaces: true,
  limits: true,
  processLimit: true,
  seccomp: false,
  disableUserns: false,
};
const policy: SandboxPolicy = {
  network: { kind: 'none' },
  read: [],
  write: ['/srv/out'],
  hide: ['/srv/gateway/test.yaml'],
  memoryBytes: 1 << 28,
  processes: 64,
  tmpBytes: 1 << 26,
};

test('the command line: argv elements after prlimit, no shell, limits inside the namespace', () => {
  const hostile = ['$(id)', '; rm -rf /', "'", '*'];
  const argv = sandboxedLaunch({ command: 'node', args: hostile, cwd: '/srv/gateway' }, policy, fullTier);
  assert.ok(!argv.some((arg) => /^(ba|da)?sh$|\/sh$/.test(arg)), 'no shell');
  assert.deepEqual(argv.slice(-5), ['node', ...hostile], "the child's argv last, verbatim");
  const bwrapEnds = argv.indexOf('--', argv.indexOf('--chdir'));
  assert.equal(argv[bwrapEnds + 1], '/usr/bin/prlimit', 'prlimit runs inside the namespace, after bwrap');
  assert.ok(argv.includes(`--data=${1 << 28}:${1 << 28}`) && argv.includes('--nproc=64:64'));
  assert.ok(argv.includes('--unshare-all') && !argv.includes('--share-net'), 'no network');
  assert.ok(argv.includes('--die-with-parent') && argv.includes('--new-session'));
  const all = sandboxedLaunch(
    { command: 'node', args: [], cwd: '/' },
    { ...policy, network: { kind: 'all' } },
    fullTier,
  );
  assert.ok(all.includes('--share-net'));
});

test('a host without namespaces refuses a sandbox, naming the setting and what to install', () => {
  const none: SandboxTier = { ...fullTier, name: 'none', namespaces: false, why: 'bwrap is not on PATH' };
  const said = shortfall('github', policy, none).join('\n');
  assert.match(said, /servers\.github\.sandbox: .*bwrap is not on PATH.*install bubblewrap.*sandbox: false/);
  const noLimits: SandboxTier = { ...fullTier, name: 'isolated', limits: false, processLimit: false };
  assert.match(shortfall('github', policy, noLimits).join('\n'), /memoryBytes, processes need prlimit/);
  const allow: SandboxPolicy = { ...policy, network: { kind: 'allow', hosts: ['api.github.com'] } };
  assert.deepEqual(shortfall('github', allow, fullTier), []);
  const noSocat = { ...fullTier, socat: undefined };
  assert.match(shortfall('github', allow, noSocat).join('\n'), /network\.allow: .*needs socat on PATH/);
});

test('an allow-list entry: a host allows ports 443 and 80, host:port that port only, nothing else', () => {
  const hosts = ['api.github.com', 'registry.npmjs.org:8443', '127.0.0.1:7000'];
  assert.ok(allowed(hosts, 'api.github.com', 443) && allowed(hosts, 'API.GitHub.com', 80));
  assert.ok(!allowed(hosts, 'api.github.com', 22));
  assert.ok(allowed(hosts, 'registry.npmjs.org', 8443) && !allowed(hosts, 'registry.npmjs.org', 443));
  assert.ok(!allowed(hosts, 'evil.api.github.com', 443) && !allowed(hosts, 'github.com', 443));
  assert.ok(allowed(hosts, '127.0.0.1', 7000) && !allowed(hosts, '127.0.0.1', 7001));
});

test('with an allow-list, sh starts socat and runs the child as "$@": arguments never parsed by the shell', () => {
  const allow: SandboxPolicy = { ...policy, network: { kind: 'allow', hosts: ['x.org'] } };
  const hostile = ['$(id)', '"; id; "'];
  const launch = { command: 'node', args: hostile, cwd: '/srv', proxySocket: '/run/p/proxy.sock' };
  const argv = sandboxedLaunch(launch, allow, fullTier);
  const sh = argv.indexOf('/bin/sh');
  assert.equal(argv[sh + 1], '-c');
  assert.match(argv[sh + 2]!, /socat.*& exec "\$@"$/);
  assert.ok(!argv[sh + 2]!.includes('$(id)'), 'the script is fixed text');
  assert.deepEqual(argv.slice(sh + 3), ['mcp-sandbox', 'node', ...hostile]);
  assert.ok(!argv.includes('--share-net'), 'still no network of its own');
});

test('a hidden file is masked where the child could see it, and nowhere else', () => {
  const folder = tempDir('sandbox-hide-');
  const secret = path.join(folder, 'gateway.config.yaml');
  writeFileSync(secret, 'secret: yes');
  const masked = (cwd: string) => {
    const argv = sandboxedLaunch({ command: 'node', args: [], cwd }, { ...policy, hide: [secret] }, fullTier);
    return argv.some((arg, i) => arg === '/dev/null' && argv[i + 1] === secret);
  };
  assert.ok(masked(folder), 'masked inside the cwd');
  assert.ok(!masked('/usr'), 'not masked (nor its path made to appear) where the child cannot see it');
});
