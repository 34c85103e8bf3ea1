// The seccomp filter every sandboxed child runs under: a classic-BPF program, compiled here, that bwrap
// loads from a file descriptor (`--seccomp FD`) just before it runs the child. It is a deny-list in the
// spirit of Docker's default profile: the system calls a stdio server has no use for and that are the
// kernel's usual attack surface are refused, everything else (io_uring included) is allowed. No npm package
// compiles seccomp programs without a native addon, and the program is small, so it is written out here.
//
// Two answers: EPERM, which a program can handle (Docker's answer, for calls a library may probe, such as
// ptrace or keyctl), and killing the process with SIGSYS for calls no server makes but exploits do (kernel
// modules, kexec, bpf, userfaultfd...). A kill is the one refusal the gateway can see: the child's exit
// (docs/sandbox.md, "What the gateway sees").
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { arch } from 'node:process';

/** Refused with EPERM: a program may try these and carry on without them. */
const REFUSED = [
  'ptrace',
  'process_vm_readv',
  'mount',
  'umount2',
  'pivot_root',
  'move_mount',
  'open_tree',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'mount_setattr',
  'chroot',
  'keyctl',
  'add_key',
  'request_key',
  'perf_event_open',
  'setns',
  'name_to_handle_at',
  'quotactl',
  'quotactl_fd',
  'syslog',
  'settimeofday',
  'clock_settime',
  'adjtimex',
  'clock_adjtime',
  'sethostname',
  'setdomainname',
  'kcmp',
  'fanotify_init',
  'vhangup',
] as const;

/** The process is killed with SIGSYS: only an attack makes these, and the kill is what the gateway sees. */
const FATAL = [
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  'reboot',
  'swapon',
  'swapoff',
  'acct',
  'bpf',
  'userfaultfd',
  'process_vm_writev',
  'open_by_handle_at',
  'lookup_dcookie',
  'nfsservctl',
  'iopl',
  'ioperm',
  'uselib',
  'create_module',
  'get_kernel_syms',
  'query_module',
  '_sysctl',
] as const;

type Syscall = (typeof REFUSED)[number] | (typeof FATAL)[number] | 'clone' | 'clone3' | 'unshare';

interface Architecture {
  /** AUDIT_ARCH_* as the kernel puts it in seccomp_data.arch. */
  audit: number;
  /** Numbers of the calls above on this architecture; a call the architecture lacks is left out. */
  numbers: Partial<Record<Syscall, number>>;
  /** x86_64's x32 ABI: numbers with this bit set are another table, which the filter refuses whole. */
  foreignBit?: number;
}

// From the kernel's syscall tables (arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h).
const ARCHITECTURES: Record<string, Architecture> = {
  x64: {
    audit: 0xc000003e,
    foreignBit: 0x40000000,
    numbers: {
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      move_mount: 429,
      open_tree: 428,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
      chroot: 161,
      keyctl: 250,
      add_key: 248,
      request_key: 249,
      perf_event_open: 298,
      setns: 308,
      name_to_handle_at: 303,
      quotactl: 179,
      quotactl_fd: 443,
      syslog: 103,
      settimeofday: 164,
      clock_settime: 227,
      adjtimex: 159,
      clock_adjtime: 305,
      sethostname: 170,
      setdomainname: 171,
      kcmp: 312,
      fanotify_init: 300,
      vhangup: 153,
      kexec_load: 246,
      kexec_file_load: 320,
      init_module: 175,
      finit_module: 313,
      delete_module: 176,
      reboot: 169,
      swapon: 167,
      swapoff: 168,
      acct: 163,
      bpf: 321,
      userfaultfd: 323,
      open_by_handle_at: 304,
      lookup_dcookie: 212,
      nfsservctl: 180,
      iopl: 172,
      ioperm: 173,
      uselib: 134,
      create_module: 174,
      get_kernel_syms: 177,
      query_module: 178,
      _sysctl: 156,
      clone: 56,
      clone3: 435,
      unshare: 272,
    },
  },
  arm64: {
    audit: 0xc00000b7,
    numbers: {
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      move_mount: 429,
      open_tree: 428,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
      chroot: 51,
      keyctl: 219,
      add_key: 217,
      request_key: 218,
      perf_event_open: 241,
      setns: 268,
      name_to_handle_at: 264,
      quotactl: 60,
      quotactl_fd: 443,
      syslog: 116,
      settimeofday: 170,
      clock_settime: 112,
      adjtimex: 171,
      clock_adjtime: 266,
      sethostname: 161,
      setdomainname: 162,
      kcmp: 272,
      fanotify_init: 262,
      vhangup: 58,
      kexec_load: 104,
      kexec_file_load: 294,
      init_module: 105,
      finit_module: 273,
      delete_module: 106,
      reboot: 142,
      swapon: 224,
      swapoff: 225,
      acct: 89,
      bpf: 280,
      userfaultfd: 282,
      open_by_handle_at: 265,
      lookup_dcookie: 18,
      nfsservctl: 42,
      clone: 220,
      clone3: 435,
      unshare: 97,
    },
  },
};

/** clone(2) and unshare(2) flags that make a namespace: refused (the child has its own already). */
const CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
/** CLONE_NEWTIME: unshare(2) only (in clone(2) that bit is part of the exit signal). */
const CLONE_NEWTIME = 0x00000080;

const EPERM = 1;
const ENOSYS = 38;
export const RET = {
  killProcess: 0x80000000,
  errno: (errno: number) => 0x00050000 | errno,
  allow: 0x7fff0000,
} as const;

// Classic BPF opcodes (linux/filter.h) and where seccomp_data keeps the call's number, arch and arguments.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
/** The low 32 bits of the first argument (little-endian: both architectures here). */
const ARG0_LOW_OFFSET = 16;

type Instruction = [code: number, jt: number, jf: number, k: number];

/** The architectures a filter exists for, by Node's name (`process.arch`). */
export const SECCOMP_ARCHITECTURES = Object.keys(ARCHITECTURES);

/** The filter for this machine's architecture as bwrap reads it (struct sock_filter[]); undefined when none. */
export function seccompProgram(machine: string = arch): Buffer | undefined {
  const target = ARCHITECTURES[machine];
  return target ? encode(compile(target)) : undefined;
}

function compile(target: Architecture): Instruction[] {
  const program: Instruction[] = [
    [LD_W_ABS, 0, 0, ARCH_OFFSET],
    // Another architecture's table (i386's int 0x80 on x86_64) has other numbers: it would slip past the list.
    [JEQ_K, 1, 0, target.audit],
    [RET_K, 0, 0, RET.killProcess],
    [LD_W_ABS, 0, 0, NR_OFFSET],
  ];
  if (target.foreignBit !== undefined) program.push([JGE_K, 0, 1, target.foreignBit], [RET_K, 0, 0, RET.killProcess]);
  const answer = (name: Syscall, action: number): void => {
    const number = target.numbers[name];
    if (number !== undefined) program.push([JEQ_K, 0, 1, number], [RET_K, 0, 0, action]);
  };
  for (const name of FATAL) answer(name, RET.killProcess);
  for (const name of REFUSED) answer(name, RET.errno(EPERM));
  // clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library fall back to clone,
  // whose flags it can (Docker does the same).
  answer('clone3', RET.errno(ENOSYS));
  refuseFlags(program, target.numbers.clone!, CLONE_NAMESPACES);
  refuseFlags(program, target.numbers.unshare!, CLONE_NAMESPACES | CLONE_NEWTIME);
  program.push([RET_K, 0, 0, RET.allow]);
  return program;
}

/** `number` with any of `flags` in its first argument gets EPERM; without them it goes on down the list. */
function refuseFlags(program: Instruction[], number: number, flags: number): void {
  program.push(
    [JEQ_K, 0, 4, number],
    [LD_W_ABS, 0, 0, ARG0_LOW_OFFSET],
    [JSET_K, 0, 1, flags],
    [RET_K, 0, 0, RET.errno(EPERM)],
    // Not refused: the call's number back in the accumulator for the checks that follow.
    [LD_W_ABS, 0, 0, NR_OFFSET],
  );
}

/** struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; } in this machine's byte order. */
function encode(program: readonly Instruction[]): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jt, index * 8 + 2);
    bytes.writeUInt8(jf, index * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return bytes;
}

let written: string | undefined;

/**
 * The filter written to a file once per gateway, for bwrap to read through a descriptor; undefined on an
 * architecture without a filter. Readable by all: a root gateway's children run as nobody, and the program
 * is no secret.
 */
export function seccompFile(): string | undefined {
  if (written) return written;
  const program = seccompProgram();
  if (!program) return undefined;
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-sandbox-seccomp-'));
  chmodSync(folder, 0o711);
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  written = path.join(folder, 'filter.bpf');
  writeFileSync(written, program, { mode: 0o644 });
  return written;
}

/** The descriptor bwrap reads the filter from (descriptors.ts opens it). */
export const SECCOMP_FD = 3;
