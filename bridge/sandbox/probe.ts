// What this host can give a sandboxed child, found once when the first sandboxed server starts: bubblewrap
// and user namespaces (isolation), prlimit (kernel resource limits) and, for a gateway running as root,
// setpriv to run the child as a user of its own (root is exempt from RLIMIT_NPROC). The tier is logged and
// shown on the status page; a server asking for more is refused (policy.ts), never run bare.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

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
  /** Why namespaces are not available, when they are not. */
  why?: string;
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
  return { name, bwrap, prlimit, setpriv, socat, namespaces, limits, processLimit, why };
}

/** setpriv's arguments that make the child's real user SANDBOX_UID, with no supplementary groups. */
export function dropRoot(): string[] {
  return [`--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_UID}`, '--clear-groups', '--'];
}

/** Starts `true` in fresh namespaces: undefined when it works, else why not (bwrap's own words). */
function tryNamespaces(prefix: string[]): Promise<string | undefined> {
  const [command, ...args] = prefix;
  const probe = [...args, '--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--', 'true'];
  return new Promise((resolve) => {
    execFile(command!, probe, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (!error) return resolve(undefined);
      const said = String(stderr).trim().split('\n')[0];
      resolve(`bwrap cannot create namespaces here: ${said || error.message}`);
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
