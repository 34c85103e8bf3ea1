// Loads gateway.config.yaml once: ${VAR} expansion, zod validation, and errors that name the key path
// and what would be valid. The core receives typed, defaulted objects and never re-checks them. This is the
// config's public face: the schema and its types (config-schema.ts) are offered from here too.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { inheritProblems } from '../child-env.js';
import { expandEnv, type EnvProblem } from './env.js';
import { ConfigError, readConfigFile } from './file.js';
import { crossKeyProblems, describeIssue, writtenServerNames } from './checks.js';
import { adoptHostServers, renameProblem } from './mcp-servers.js';
import { salvage, type Salvaged, type SalvageRules } from './salvage.js';
import { credentialProblems } from './credential-problems.js';
import { perCallerProblems } from './per-caller-checks.js';
import { effectiveSandbox } from './sandbox.js';
import { configSchema, type GatewayConfig, type ParsedConfig } from './config-schema.js';

export { ConfigError, ConfigFileMissing } from './file.js';
export { exposureProblem, guardrailNames, serverHeads } from './checks.js';
export { SERVER_NAME } from './servers.js';
export {
  LOG_LEVELS,
  configSchema,
  type GatewayConfig,
  type ServerConfig,
  type StdioServerConfig,
  type HttpServerConfig,
  type SseServerConfig,
  type OpenApiServerConfig,
} from './config-schema.js';

/** Reads, expands and validates a config file. Relative `cwd`s are resolved against the file's folder. */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<GatewayConfig> {
  const raw = await readConfigFile(file);
  return parseConfig(raw ?? {}, file, path.dirname(path.resolve(file)), env);
}

/** Expands, validates and checks a config, reporting every problem of all three steps in one ConfigError. */
export function parseConfig(
  raw: unknown,
  source: string,
  baseDir: string,
  env: NodeJS.ProcessEnv = process.env,
): GatewayConfig {
  const host = adoptHostServers(raw); // a host's mcpServers map (Claude Desktop, Cursor) becomes servers: entries
  const envProblems: EnvProblem[] = [];
  // ${CONFIG_DIR} names the config file's folder, so paths handed to servers can be made absolute.
  const reads = new Set<string>();
  const expanded = expandEnv(host.raw, [], { CONFIG_DIR: baseDir, ...env }, envProblems, reads, baseDir);
  const envReads = [...reads].filter((name) => name !== 'CONFIG_DIR').sort(); // CONFIG_DIR: a folder, not a secret
  const problems = [...host.problems, ...envProblems.map((problem) => problem.message)];
  const unset = envProblems.map((problem) => problem.path.join('.'));
  const parsed = configSchema.safeParse(expanded);
  let checkable: Salvaged<ParsedConfig> | undefined;
  if (parsed.success) checkable = { config: parsed.data, cut: [] };
  else {
    // A key whose variable is unset holds '', which its validator refuses too: say it once, as the variable.
    problems.push(
      ...parsed.error.issues
        .filter((issue) => !unset.includes(issue.path.join('.')))
        .map((issue) => describeIssue(issue)),
    );
    checkable = salvage(configSchema, expanded, parsed.error.issues, SALVAGE_RULES);
  }
  if (checkable)
    problems.push(
      ...crossKeyProblems(
        { ...checkable.config, envReads },
        [...checkable.cut, ...unset],
        writtenServerNames(expanded),
      ),
      ...inheritProblems(checkable.config.servers, reads),
      ...(checkable.cut.some((at) => at === 'listen' || at.startsWith('auth') || at.startsWith('credentials'))
        ? []
        : credentialProblems(checkable.config)),
      ...(checkable.cut.some((at) => at === 'listen' || at.startsWith('auth') || at.startsWith('credentials'))
        ? []
        : perCallerProblems(checkable.config)),
    );
  if (problems.length || !checkable)
    throw new ConfigError(
      source,
      problems.map((problem) => renameProblem(problem, host.fromMcpServers)),
    );
  const config: GatewayConfig = { ...checkable.config, envReads };
  const gatewayFiles = ownFiles(config, source, baseDir);
  for (const server of Object.values(config.servers)) {
    // A document named by path is read from the config's folder, as a URL is read from where it says.
    if (server.transport === 'openapi' && !/^https?:\/\//i.test(server.openapi))
      server.openapi = path.resolve(baseDir, server.openapi);
    if (server.transport !== 'stdio') continue;
    server.cwd = path.resolve(baseDir, server.cwd);
    const policy = effectiveSandbox(config.sandbox, server.sandbox, baseDir, gatewayFiles);
    if (policy) server.sandboxPolicy = policy;
  }
  const jwtSetting = config.auth?.jwt;
  if (jwtSetting) {
    for (const key of ['jwksFile', 'publicKeyFile'] as const) {
      if (jwtSetting[key] !== undefined) jwtSetting[key] = path.resolve(baseDir, jwtSetting[key]);
    }
  }
  if (config.pinsFile !== undefined) config.pinsFile = path.resolve(baseDir, config.pinsFile);
  if (config.credentials) config.credentials.file = path.resolve(baseDir, config.credentials.file);
  const audit = config.audit;
  if (!['stderr', 'stdout'].includes(audit.destination)) audit.destination = path.resolve(baseDir, audit.destination);
  return config;
}

/** The gateway's own files, hidden from every sandboxed child: the config, credential store and pins. */
function ownFiles(config: GatewayConfig, source: string, baseDir: string): string[] {
  const files = [path.resolve(baseDir, source)].filter((file) => existsSync(file) && statSync(file).isFile());
  if (config.credentials) files.push(path.resolve(baseDir, config.credentials.file));
  if (config.pinsFile !== undefined) files.push(path.resolve(baseDir, config.pinsFile));
  return files;
}

/**
 * A broken server or profile is cut whole; a broken policy is stood in for, so the others keep their indexes in
 * messages.
 */
const SALVAGE_RULES: SalvageRules = {
  unit: (at: PropertyKey[]) =>
    at.length > 2 && ['servers', 'policies', 'profiles', 'guardrails'].includes(String(at[0])) ? at.slice(0, 2) : at,
  standIn: (at: PropertyKey[]) =>
    at.length === 2 && at[0] === 'policies'
      ? { name: `(policies[${String(at[1])}], not valid)`, principals: { ids: ['*'] } }
      : at.length === 2 && at[0] === 'guardrails'
        ? { name: `(guardrails[${String(at[1])}], not valid)`, on: ['results'], detect: ['email'], action: 'log' }
        : undefined,
};
