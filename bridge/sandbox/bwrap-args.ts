// The bubblewrap command line that runs one stdio child sandboxed: a root of its own built from read-only
// binds of its runtime, its cwd and `read:` paths, read-write binds of `write:` paths, a sized private tmpfs
// for /tmp, home and data, fresh namespaces (no other process in /proc, no network unless granted), and
// prlimit inside the namespace for the kernel limits. Every value is its own argv element: nothing here
// passes through a shell, so no config argument can be read as shell syntax.
import { existsSync, lstatSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';
import { PROXY_PORT, PROXY_SOCKET_INSIDE } from './connect-proxy.js';
import type { SandboxPolicy } from './policy.js';
import { dropRoot, type SandboxTier } from './probe.js';
import { type Descriptor, openingDescriptors } from './descriptors.js';
import { STATUS_FD } from './exit-watch.js';
import { SECCOMP_FD, seccompFile } from './seccomp.js';

/** Where the child's private tmpfs is mounted, and its home and data folders in it. */
export const SANDBOX_TMP = '/tmp';
export const SANDBOX_HOME = '/tmp/home';
export const SANDBOX_DATA = '/tmp/data';

/** The runtime every child sees read-only: programs, libraries and /etc (minus the secrets masked below). */
const RUNTIME = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt'];
/** Files under /etc no server needs: password hashes, sudo rules, SSH host keys. */
const ETC_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssh',
  '/etc/security/opasswd',
];

export interface ChildLaunch {
  command: string;
  args: string[];
  cwd: string;
  /** With network.allow: the host side of the filtering proxy's unix socket (connect-proxy.ts). */
  proxySocket?: string;
  /** The FIFO bwrap writes the child's status to, how it ended included (exit-watch.ts). */
  statusFifo?: string;
}

/** The argv that starts `command args` in `cwd` inside the policy's sandbox. */
export function sandboxedLaunch(launch: ChildLaunch, policy: SandboxPolicy, tier: SandboxTier): string[] {
  const root = process.getuid?.() === 0 && tier.setpriv !== undefined;
  const places = visiblePlaces(launch.cwd, policy);
  const filter = tier.seccomp ? seccompFile() : undefined;
  const descriptors: Descriptor[] = [];
  if (filter) descriptors.push([SECCOMP_FD, '<', filter]);
  if (launch.statusFifo) descriptors.push([STATUS_FD, '>', launch.statusFifo]);
  return [
    ...(root ? [tier.setpriv!, ...dropRoot()] : []),
    ...openingDescriptors(descriptors),
    tier.bwrap!,
    '--die-with-parent',
    '--new-session',
    '--unshare-all',
    // No user namespace of its own inside (the kernel's namespace code is attack surface); bwrap 0.8 and later.
    ...(tier.disableUserns ? ['--unshare-user', '--disable-userns'] : []),
    ...(filter ? ['--seccomp', String(SECCOMP_FD)] : []),
    ...(launch.statusFifo ? ['--json-status-fd', String(STATUS_FD)] : []),
    ...(policy.network.kind === 'all' ? ['--share-net'] : []),
    '--cap-drop',
    'ALL',
    // The private tmpfs first: a bind under /tmp (a cwd or read: path there) is mounted over it, not hidden.
    '--size',
    String(policy.tmpBytes),
    '--tmpfs',
    SANDBOX_TMP,
    '--dir',
    SANDBOX_HOME,
    '--dir',
    SANDBOX_DATA,
    ...viewArgs(places),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    ...hideArgs(policy.hide, places),
    ...(launch.proxySocket ? ['--bind', launch.proxySocket, PROXY_SOCKET_INSIDE] : []),
    '--chdir',
    launch.cwd,
    '--',
    ...limitArgs(policy, tier),
    ...(launch.proxySocket && tier.socat ? proxyLauncher(tier.socat) : []),
    launch.command,
    ...launch.args,
  ];
}

/**
 * With an allow-list: sh starts socat (the proxy's socket offered on 127.0.0.1 inside the sandbox) and then
 * execs the child. The script is fixed text; the child's command and arguments follow as sh's positional
 * parameters and are run as "$@", so no config value is ever parsed by the shell.
 */
function proxyLauncher(socat: string): string[] {
  const listen = `TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr`;
  const script = `'${socat}' ${listen} UNIX-CONNECT:${PROXY_SOCKET_INSIDE} </dev/null >/dev/null 2>&1 & exec "$@"`;
  return ['/bin/sh', '-c', script, 'mcp-sandbox'];
}

/** What the child sees, shallowest first so a deeper `write:` inside a read-only folder stays writable. */
function visiblePlaces(cwd: string, policy: SandboxPolicy): [string, 'ro' | 'rw'][] {
  const binds = new Map<string, 'ro' | 'rw'>();
  for (const folder of RUNTIME) binds.set(folder, 'ro');
  binds.set(nodePrefix(), 'ro');
  binds.set(cwd, 'ro');
  for (const place of policy.read) binds.set(place, 'ro');
  for (const place of policy.write) binds.set(place, 'rw');
  return [...binds]
    .filter(([place]) => existsSync(place))
    .sort(([a], [b]) => depth(a) - depth(b) || a.localeCompare(b));
}

function viewArgs(places: readonly [string, 'ro' | 'rw'][]): string[] {
  const args: string[] = [];
  for (const [place, mode] of places) {
    const link = RUNTIME.includes(place) && lstatSync(place).isSymbolicLink();
    if (link) args.push('--symlink', readlinkSync(place), place);
    else args.push(mode === 'ro' ? '--ro-bind' : '--bind', place, place);
  }
  return args;
}

/**
 * Secrets inside visible folders: an empty file over a file, an empty tmpfs over a folder. One outside every
 * visible folder is not there to hide, and masking it would only make its path appear.
 */
function hideArgs(hide: readonly string[], places: readonly [string, 'ro' | 'rw'][]): string[] {
  const args: string[] = [];
  const shown = (place: string) => places.some(([seen]) => place === seen || place.startsWith(`${seen}/`));
  for (const place of [...ETC_SECRETS, ...hide]) {
    if (!existsSync(place) || !shown(place)) continue;
    if (statSync(place).isDirectory()) args.push('--tmpfs', place);
    else args.push('--ro-bind', '/dev/null', place);
  }
  return args;
}

/** prlimit inside the namespace: its counts start there, so the gateway's own processes are not counted. */
function limitArgs(policy: SandboxPolicy, tier: SandboxTier): string[] {
  const limits: string[] = [];
  const set = (flag: string, value: number | undefined): void => {
    if (value !== undefined) limits.push(`--${flag}=${value}:${value}`);
  };
  set('data', policy.memoryBytes);
  // SIGXCPU at cpuSeconds, which the gateway can tell from other deaths; SIGKILL a second later (the hard
  // limit) for a child that catches it. With both equal the kernel sends SIGKILL alone.
  if (policy.cpuSeconds !== undefined) limits.push(`--cpu=${policy.cpuSeconds}:${policy.cpuSeconds + 1}`);
  set('nproc', policy.processes);
  set('nofile', policy.openFiles);
  return limits.length && tier.prlimit ? [tier.prlimit, ...limits, '--'] : [];
}

/** The folder node was installed under (a version manager's, say): its runtime, shown read-only. */
function nodePrefix(): string {
  return path.dirname(path.dirname(process.execPath));
}

function depth(place: string): number {
  return place.split('/').length;
}
