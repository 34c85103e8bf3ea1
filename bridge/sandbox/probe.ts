// What this host can give a sandboxed child, found once when the first sandboxed server starts: bubblewrap
// and user namespaces (isolation), prlimit (kernel resource limits) and, for a gateway running as root,
// setpriv to run the child as a user of its own (root is exempt from RLIMIT_NPROC). The tier is logged and
// shown on the status page; a server asking for more is refused (policy.ts), never run bare.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { openingDescriptors } from './descriptors.js';
import { SECCOMP_FD, seccompFile } from './seccomp.js';

/** The user a root gateway's sandboxed children run as: nobody, so the kernel counts their processes. */
export const SANDBOX_UID = 65534;

export interface SandboxTier {
  /** `none`: children cannot be isolated; `isolated`: namespaces only; `full`: namespaces and kernel limits. */
  name: 'none' | 'isolated' | 'full';
  bwrap: string | undefined;
  prlimit: string | undefined;
  /** setpriv, when the gateway runs as root: children then run as SANDBOX_UID. */
  setpriv: string | undefined;
  /** socat, which offers the filtering proxy inside a sandbox (network.allow). */
  socat: string | undefined;
  namespaces: boolean;
  limits: boolean;
  /** Whether RLIMIT_NPROC holds for a child (never for a child whose real user is root). */
  processLimit: boolean;
  /** Whether every child runs under the seccomp filter (seccomp.ts): not on an architecture it has no table for. */
  seccomp: boolean;
  /** Whether bwrap can forbid the child user namespaces of its own (`--disable-userns`, bubblewrap 0.8). */
  disableUserns: boolean;
  /** Why namespaces are not available, when they are not. */
  why?: string;
  /** Why there is no seccomp filter, when there is none. */
  seccompWhy?: string;
}

let probed: Promise<SandboxTier> | undefined;

/** The host's tier, probed once per process. */
export function sandboxTier(): Promise<SandboxTier> {
  probed ??= probeTier();
  return probed;
}

async function probeTier(): Promise<SandboxTier> {
  const bwrap = onPath('bwrap');
  const prlimit = onPath('prlimit');
  const root = process.getuid?.() === 0;
  const setpriv = root ? onPath('setpriv') : undefined;
  const socat = onPath('socat');
  let why: string | undefined = bwrap ? undefined : 'bwrap (bubblewrap) is not on PATH';
  if (bwrap) why = await tryNamespaces(root && setpriv ? [setpriv, ...dropRoot(), bwrap] : [bwrap]);
  const namespaces = why === undefined;
  const limits = namespaces && prlimit !== undefined;
  const processLimit = limits && (!root || setpriv !== undefined);
  const name = !namespaces ? 'none' : limits && processLimit ? 'full' : 'isolated';
  const prefix = root && setpriv ? [setpriv, ...dropRoot()] : [];
  const hardening = namespaces ? await probeHardening(prefix, bwrap!) : { disableUserns: false, seccompWhy: why };
  const seccomp = hardening.seccompWhy === undefined;
  return { name, bwrap, prlimit, setpriv, socat, namespaces, limits, processLimit, why, seccomp, ...hardening };
}

/** What bwrap can add here: `--disable-userns` (0.8 and later), and the seccomp filter (this architecture). */
async function probeHardening(
  prefix: string[],
  bwrap: string,
): Promise<{ disableUserns: boolean; seccompWhy?: string }> {
  const disableUserns = (await tryBwrap([...prefix, bwrap, '--unshare-user', '--disable-userns'])) === undefined;
  const file = seccompFile();
  if (!file) return { disableUserns, seccompWhy: `no seccomp filter for this architecture (${process.arch})` };
  const failed = await tryBwrap([
    ...prefix,
    ...openingDescriptors([[SECCOMP_FD, '<', file]]),
    bwrap,
    '--seccomp',
    String(SECCOMP_FD),
  ]);
  return { disableUserns, ...(failed && { seccompWhy: failed }) };
}

/** setpriv's arguments that make the child's real user SANDBOX_UID, with no supplementary groups. */
export function dropRoot(): string[] {
  return [`--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_UID}`, '--clear-groups', '--'];
}

/** Starts `true` in fresh namespaces: undefined when it works, else why not (bwrap's own words). */
async function tryNamespaces(prefix: string[]): Promise<string | undefined> {
  const failed = await tryBwrap(prefix);
  return failed && `bwrap cannot create namespaces here: ${failed}`;
}

/** Runs `true` with `bwrap` (its options last in `command`) in fresh namespaces: undefined or what went wrong. */
function tryBwrap(command: string[]): Promise<string | undefined> {
  const [program, ...args] = command;
  const probe = [...args, '--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--', 'true'];
  return new Promise((resolve) => {
    execFile(program!, probe, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (!error) return resolve(undefined);
      resolve(String(stderr).trim().split('\n')[0] || error.message);
    });
  });
}

function onPath(program: string): string | undefined {
  for (const folder of (process.env.PATH ?? '/usr/bin:/bin').split(path.delimiter)) {
    if (!folder) continue;
    const candidate = path.join(folder, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
