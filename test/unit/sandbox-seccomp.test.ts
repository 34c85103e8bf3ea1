// The seccomp program (bridge/sandbox/seccomp.ts) run through a small classic-BPF interpreter, as the kernel
// runs it for each system call: what it answers for the calls it refuses, the ones it kills for, namespace
// flags on clone and unshare, another architecture's table, and the calls a runtime needs. The real kernel's
// answers are in test/e2e/sandbox-syscalls.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sandboxedLaunch } from '../../bridge/sandbox/bwrap-args.js';
import type { SandboxPolicy } from '../../bridge/sandbox/policy.js';
import type { SandboxTier } from '../../bridge/sandbox/probe.js';
import { RET, SECCOMP_ARCHITECTURES, seccompProgram } from '../../bridge/sandbox/seccomp.js';
import { describeTier } from '../../bridge/sandbox/sandbox.js';

const X86_64 = 0xc000003e;
const AARCH64 = 0xc00000b7;
const I386 = 0x40000003;
const KILL = RET.killProcess;
const EPERM = RET.errno(1);
const ENOSYS = RET.errno(38);
const ALLOW = RET.allow;

/** What the program answers for one call: seccomp_data is { nr, arch, ip, args[6] }, read as 32-bit words. */
function run(program: Buffer, arch: number, nr: number, args: number[] = []): number {
  const data = new DataView(new ArrayBuffer(64));
  data.setUint32(0, nr >>> 0, true);
  data.setUint32(4, arch >>> 0, true);
  for (const [index, value] of args.entries()) data.setUint32(16 + index * 8, value >>> 0, true);
  let accumulator = 0;
  for (let pc = 0; pc < program.length / 8; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = data.getUint32(k, true);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x45) pc += (accumulator & k) !== 0 ? jt : jf;
    else throw new Error(`unknown opcode ${code.toString(16)} at ${pc}`);
  }
  throw new Error('the program ran off its end');
}

const x64 = seccompProgram('x64')!;
const tier = {
  name: 'full',
  bwrap: '/usr/bin/bwrap',
  prlimit: '/usr/bin/prlimit',
  setpriv: undefined,
  socat: undefined,
  namespaces: true,
  limits: true,
  processLimit: true,
  seccomp: true,
  disableUserns: true,
} satisfies SandboxTier;
const arm64 = seccompProgram('arm64')!;

test('x86_64: the attack surface is refused, the worst kills, a runtime keeps what it needs', () => {
  for (const [name, nr] of Object.entries({ ptrace: 101, mount: 165, keyctl: 250, setns: 308, perf: 298 }))
    assert.equal(run(x64, X86_64, nr), EPERM, name);
  for (const [name, nr] of Object.entries({ bpf: 321, kexec_load: 246, init_module: 175, userfaultfd: 323 }))
    assert.equal(run(x64, X86_64, nr), KILL, name);
  // read, write, openat, mmap, futex, epoll_wait, io_uring_setup, io_uring_enter, execve, prlimit64
  for (const nr of [0, 1, 257, 9, 202, 232, 425, 426, 59, 302]) assert.equal(run(x64, X86_64, nr), ALLOW, `${nr}`);
});

test('clone and unshare: namespace flags are refused, a thread or a fork is not; clone3 falls back', () => {
  const CLONE_THREAD_FLAGS = 0x003d0f00;
  assert.equal(run(x64, X86_64, 56, [CLONE_THREAD_FLAGS]), ALLOW, 'a thread');
  assert.equal(run(x64, X86_64, 56, [0x01200011]), ALLOW, 'fork (SIGCHLD | CLONE_CHILD_SETTID...)');
  assert.equal(run(x64, X86_64, 56, [0x10000000 | 17]), EPERM, 'clone(CLONE_NEWUSER)');
  assert.equal(run(x64, X86_64, 272, [0x10000000]), EPERM, 'unshare(CLONE_NEWUSER)');
  assert.equal(run(x64, X86_64, 272, [0x00000080]), EPERM, 'unshare(CLONE_NEWTIME)');
  assert.equal(run(x64, X86_64, 272, [0x400]), ALLOW, 'unshare(CLONE_FILES)');
  assert.equal(run(x64, X86_64, 435), ENOSYS, 'clone3: ENOSYS, so the C library uses clone');
});

test("another architecture's table is killed: i386 on x86_64, the x32 ABI, x86_64 numbers on arm64", () => {
  assert.equal(run(x64, I386, 1), KILL, 'int 0x80');
  assert.equal(run(x64, X86_64, 0x40000000 | 101), KILL, 'x32 ptrace');
  assert.equal(run(arm64, X86_64, 63), KILL);
});

test('aarch64 has its own numbers', () => {
  assert.equal(run(arm64, AARCH64, 117), EPERM, 'ptrace');
  assert.equal(run(arm64, AARCH64, 280), KILL, 'bpf');
  assert.equal(run(arm64, AARCH64, 220, [0x20000000 | 17]), EPERM, 'clone(CLONE_NEWPID)');
  assert.equal(run(arm64, AARCH64, 101), ALLOW, 'nanosleep (ptrace on x86_64)');
});

test('an unknown architecture has no filter, and the tier says so', () => {
  assert.deepEqual(SECCOMP_ARCHITECTURES.sort(), ['arm64', 'x64']);
  assert.equal(seccompProgram('riscv64'), undefined);
  const why = 'no seccomp filter for this architecture (riscv64)';
  const shown = describeTier({ ...tier, seccomp: false, disableUserns: false, seccompWhy: why });
  assert.equal(shown.seccomp, false);
  assert.equal(shown.seccompWhy, why);
  assert.equal(shown.nestedUserNamespaces, 'allowed');
  assert.equal(describeTier(tier).nestedUserNamespaces, 'disabled');
});

test('with seccomp and a status FIFO, a fixed sh script opens them and execs bwrap; paths are never parsed', () => {
  const policy: SandboxPolicy = { network: { kind: 'none' }, read: [], write: [], hide: [], tmpBytes: 1 << 26 };
  const fifo = '/tmp/x/$(touch pwned)';
  const argv = sandboxedLaunch({ command: 'node', args: [], cwd: '/', statusFifo: fifo }, policy, tier);
  assert.deepEqual(argv.slice(0, 3), ['/bin/sh', '-c', 'exec 3<"$1" 4>"$2" && shift 2 && exec "$@"']);
  assert.equal(argv[5], fifo, 'the FIFO is a positional parameter');
  assert.equal(argv[6], '/usr/bin/bwrap');
  for (const pair of [
    ['--seccomp', '3'],
    ['--json-status-fd', '4'],
    ['--unshare-user', '--disable-userns'],
  ]) {
    const at = argv.indexOf(pair[0]!);
    assert.deepEqual(argv.slice(at, at + 2), pair);
  }
});
