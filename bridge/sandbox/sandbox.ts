// The one entry point the gateway uses: turn a stdio child's command into the same child run inside its
// sandbox, or refuse it with what the host lacks. Loaded with a dynamic import() only when a config
// sandboxes a server, so a gateway without sandboxes never loads or probes any of this.
import { existsSync } from 'node:fs';
import type { Log } from '../../infra/log.js';
import { SANDBOX_DATA, SANDBOX_HOME, SANDBOX_TMP, sandboxedLaunch } from './bwrap-args.js';
import { PROXY_PORT } from './connect-proxy.js';
import { watchExits } from './exit-watch.js';
import { type SandboxPolicy, shortfall } from './policy.js';
import { sandboxTier, type SandboxTier } from './probe.js';

export type { SandboxPolicy, SandboxNetwork } from './policy.js';
export { sandboxTier, type SandboxTier } from './probe.js';

/** The variable that names the child's private data folder (a folder in its own tmpfs). */
export const DATA_VARIABLE = 'MCP_SANDBOX_DATA';

export interface ChildCommand {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** A sandboxed child's command, and what the gateway runs beside it for that server until it is released. */
export interface SandboxedCommand extends ChildCommand {
  /** Closes the server's proxy and status FIFO (and removes their files): call it when the server stops. */
  release(): void;
}

export class SandboxRefused extends Error {
  constructor(readonly missing: string[]) {
    super(missing.join('; '));
    this.name = 'SandboxRefused';
  }
}

let tierLogged = false;

/**
 * `child` as a sandboxed command line (bwrap, then the child's own argv), with the private home, tmp and
 * data folder in its environment. Throws SandboxRefused when the host cannot give what `policy` asks for.
 */
export async function sandboxChild(
  server: string,
  child: ChildCommand,
  policy: SandboxPolicy,
  log: Log,
): Promise<SandboxedCommand> {
  const tier = await sandboxTier();
  logTier(tier, log);
  const missing = shortfall(server, policy, tier);
  if (missing.length) throw new SandboxRefused(missing);
  warnAbsent(server, policy, log);
  const proxy =
    policy.network.kind === 'allow'
      ? await (await import('./connect-proxy.js')).startConnectProxy(server, policy.network.hosts, log)
      : undefined;
  const exits = watchExits(server, log);
  const launch = { ...child, proxySocket: proxy?.socket, statusFifo: exits?.fifo };
  const [command, ...args] = sandboxedLaunch(launch, policy, tier);
  return {
    command: command!,
    args,
    cwd: child.cwd,
    env: sandboxEnv(child.env, proxy !== undefined),
    release: () => {
      proxy?.close();
      exits?.close();
    },
  };
}

/** Said once per gateway; a warning when the host gives less than everything the sandbox can do. */
function logTier(tier: SandboxTier, log: Log): void {
  if (tierLogged) return;
  tierLogged = true;
  if (tier.name === 'full' && tier.seccomp) log.info({ sandboxTier: describeTier(tier) }, `sandbox tier: ${tier.name}`);
  else
    log.warn({ sandboxTier: describeTier(tier) }, `sandbox tier: ${tier.name}${tier.seccomp ? '' : ' (no seccomp)'}`);
}

/** A `read:` or `write:` path that does not exist is not shown to the child: most likely a typo. */
function warnAbsent(server: string, policy: SandboxPolicy, log: Log): void {
  for (const key of ['read', 'write'] as const) {
    for (const place of policy[key]) {
      if (!existsSync(place))
        log.warn(
          { path: place },
          `servers.${server}.sandbox.${key}: ${place} does not exist, so the child cannot see it`,
        );
    }
  }
}

/** What `policy` asks for that this host cannot give (probing it if not yet done); [] when it fits. */
export async function sandboxProblems(server: string, policy: SandboxPolicy): Promise<string[]> {
  return shortfall(server, policy, await sandboxTier());
}

/** The tier in a form for logs, the status page and /config. */
export function describeTier(tier: SandboxTier): Record<string, unknown> {
  return {
    name: tier.name,
    namespaces: tier.namespaces,
    limits: tier.limits,
    processLimit: tier.processLimit,
    networkAllowList: tier.socat !== undefined,
    seccomp: tier.seccomp,
    nestedUserNamespaces: tier.disableUserns ? 'disabled' : tier.seccomp ? 'refused by seccomp' : 'allowed',
    ...(tier.why && { why: tier.why }),
    ...(tier.seccompWhy && tier.namespaces && { seccompWhy: tier.seccompWhy }),
  };
}

/** The names HTTP clients read their proxy from (curl, Python, Go, npm; not Node 20's fetch). */
function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return { HTTPS_PROXY: url, HTTP_PROXY: url, ALL_PROXY: url, https_proxy: url, http_proxy: url, all_proxy: url };
}

/** Names about the gateway's own user and folders, which a sandboxed child must not be told. */
const GATEWAY_ONLY = /^(USER|LOGNAME|XDG_.*)$/;

/** The child's own environment with home, tmp and data pointed into its private tmpfs. */
function sandboxEnv(env: Record<string, string>, proxied: boolean): Record<string, string> {
  const own = Object.fromEntries(Object.entries(env).filter(([name]) => !GATEWAY_ONLY.test(name)));
  return {
    ...own,
    ...(proxied && proxyEnv()),
    HOME: SANDBOX_HOME,
    TMPDIR: SANDBOX_TMP,
    TMP: SANDBOX_TMP,
    TEMP: SANDBOX_TMP,
    [DATA_VARIABLE]: SANDBOX_DATA,
  };
}
