// What a sandboxed stdio child is granted, as the config resolved it (absolute paths, defaults filled), and
// the check that refuses a policy the platform cannot enforce: a server is never run with less isolation
// than its config asks for without a word (docs/sandbox.md).
import type { SandboxTier } from './probe.js';

/** `none`: loopback of its own only; `all`: the host's network; `allow`: only these hosts (through a proxy). */
export type SandboxNetwork = { kind: 'none' } | { kind: 'all' } | { kind: 'allow'; hosts: string[] };

export interface SandboxPolicy {
  network: SandboxNetwork;
  /** Folders and files shown read-only besides the runtime and the child's cwd. */
  read: string[];
  /** Folders and files shown read-write. */
  write: string[];
  /** Files and folders inside those that the child must not see (the gateway's own config and stores). */
  hide: string[];
  /** RLIMIT_DATA: the child's heap and other private writable memory. */
  memoryBytes?: number;
  /** RLIMIT_CPU: seconds of processor time over the child's whole life. */
  cpuSeconds?: number;
  /** RLIMIT_NPROC: processes and threads at once inside this child's sandbox. */
  processes?: number;
  /** RLIMIT_NOFILE: open files and sockets per process. */
  openFiles?: number;
  /** Size of the private tmpfs that holds the child's /tmp, home and data folder. */
  tmpBytes: number;
}

/** What the policy asks for that the tier cannot give, in words that name the setting; [] when it fits. */
export function shortfall(server: string, policy: SandboxPolicy, tier: SandboxTier): string[] {
  const missing: string[] = [];
  const at = `servers.${server}.sandbox`;
  if (!tier.namespaces) {
    missing.push(
      `${at}: this host cannot isolate a child (${tier.why ?? 'no bubblewrap'}); install bubblewrap ` +
        `and allow user namespaces (docs/sandbox.md: What a host needs), or set ${at}: false to run it bare`,
    );
    return missing;
  }
  const limits = limitKeys(policy);
  if (limits.length && !tier.limits)
    missing.push(`${at}: ${limits.join(', ')} need prlimit (util-linux) in the sandbox, which this host lacks`);
  if (policy.processes !== undefined && !tier.processLimit)
    missing.push(
      `${at}.processes: the kernel does not count a root child's processes, and this gateway runs as ` +
        `root without setpriv (util-linux) to give the child a user of its own; install util-linux or remove it`,
    );
  if (policy.network.kind === 'allow' && !tier.socat)
    missing.push(
      `${at}.network.allow: a host allow-list (${policy.network.hosts.join(', ')}) needs socat on PATH to ` +
        `offer the filtering proxy inside the sandbox; install socat, or use [] for no network or ["*"] for all`,
    );
  return missing;
}

function limitKeys(policy: SandboxPolicy): string[] {
  const keys = ['memoryBytes', 'cpuSeconds', 'processes', 'openFiles'] as const;
  return keys.filter((key) => policy[key] !== undefined);
}
