// What a stdio child's environment holds. Not the gateway's: that carries API keys, mrtr.secret and
// upstream tokens the config reads with ${VAR}, and any caller allowed a tool that prints the environment
// or runs code would read them. A child gets a short list the operating system and language runtimes
// need, the names its server opts into with `inheritEnv`, and its own `env:`; never a variable the config
// reads (docs/configuration.md, "Stdio servers", and docs/security.md).
import { anyOf } from '../policy/globs.js';

/**
 * Always passed when set: where programs are, whose home and temp folders, locale and time zone, and where
 * TLS trust lives. Paths and settings, not secrets; a child started through npx or uvx needs PATH and HOME.
 */
export const BASE_ENV = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'XDG_*',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
] as const;
const isBase = anyOf(BASE_ENV);
/** How inheritEnv names variables: letters, digits and _, with * and ? as wildcards. */
export const ENV_GLOB = /^[A-Za-z0-9_*?]+$/;

export interface ChildEnv {
  env: Record<string, string>;
  /** Variables an inheritEnv glob matched that were withheld because the config reads them. */
  withheld: string[];
}

/**
 * The child's environment: the base list, then the variables `inheritEnv` names (globs allowed) except
 * those the config reads (`configReads`), then the server's own `env:`, which wins.
 */
export function childEnvironment(
  parent: NodeJS.ProcessEnv,
  inheritEnv: readonly string[],
  configReads: ReadonlySet<string>,
  own: Record<string, string>,
): ChildEnv {
  const inherits = anyOf(inheritEnv);
  const env: Record<string, string> = {};
  const withheld: string[] = [];
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (isBase(name)) env[name] = value;
    else if (inherits(name)) {
      if (configReads.has(name)) withheld.push(name);
      else env[name] = value;
    }
  }
  return { env: { ...env, ...own }, withheld: withheld.sort() };
}

/**
 * A child never inherits a variable the config reads (an API key, a secret, another server's token). Named
 * outright in inheritEnv that is a mistake worth stopping for; matched by a glob it is withheld, with a
 * warning at start (childEnvironment above), since a glob such as AWS_* is written without every name in mind.
 */
export function inheritProblems(
  servers: Record<string, { transport: string; inheritEnv?: readonly string[] }>,
  reads: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  for (const [name, server] of Object.entries(servers)) {
    for (const variable of server.inheritEnv ?? []) {
      if (!reads.has(variable)) continue;
      problems.push(
        `servers.${name}.inheritEnv: ${variable} is read by this config (\${${variable}}), and a child never ` +
          `inherits what the config reads; ` +
          `remove it, or hand this server that value on purpose with servers.${name}.env: { ${variable}: ` +
          `"\${${variable}}" }`,
      );
    }
  }
  return problems;
}
