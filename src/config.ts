// Loads gateway.config.yaml once: ${VAR} expansion, zod validation, and errors that name the key path
// and what would be valid. The core receives typed, defaulted objects and never re-checks them.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

export const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;
const MiB = 1024 * 1024;

/** A whole number, also when it came from ${VAR} expansion as a string of digits. */
const int = () => z.preprocess((v) => (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v), z.number().int());
const positiveMs = z.preprocess((v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v), z.number().int().positive());

const stdioServer = z.strictObject({
  command: z.string().min(1, 'give the program to run, for example "node"'),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().default('.'),
  era: z.enum(['auto', 'modern', 'legacy']).default('auto'),
  timeoutMs: positiveMs.default(60_000),
  probeTimeoutMs: positiveMs.default(5_000),
  startupTimeoutMs: positiveMs.default(30_000),
  shutdownGraceMs: positiveMs.default(2_000),
  legacyTtlMs: int().pipe(z.number().min(0)).default(0),
  maxLineBytes: int().pipe(z.number().min(1024)).default(16 * MiB),
});

const configSchema = z.strictObject({
  listen: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: int().pipe(z.number().min(0).max(65535)).default(8080),
      allowedOrigins: z.array(z.string()).default([]),
      maxBodyBytes: int().pipe(z.number().min(1024)).default(4 * MiB),
    })
    .prefault({}),
  log: z.strictObject({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') }).prefault({}),
  servers: z.record(
    z.string().regex(SERVER_NAME, 'server names are 1-32 characters of A-Z a-z 0-9 _ -'),
    stdioServer,
  ),
});

export type GatewayConfig = z.infer<typeof configSchema>;
export type StdioServerConfig = z.infer<typeof stdioServer>;

export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source} is not a valid mcp-gateway config:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads, expands and validates a config file. Relative `cwd`s are resolved against the file's folder. */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<GatewayConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, [`cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); pass an existing file with --config`]);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError(file, [`not valid YAML: ${(error as Error).message.split('\n')[0]}`]);
  }
  return parseConfig(raw ?? {}, file, path.dirname(path.resolve(file)), env);
}

export function parseConfig(raw: unknown, source: string, baseDir: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const problems: string[] = [];
  // ${CONFIG_DIR} names the config file's folder, so paths handed to servers can be made absolute.
  const expanded = expandEnv(raw, [], { CONFIG_DIR: baseDir, ...env }, problems);
  if (problems.length) throw new ConfigError(source, problems);
  const parsed = configSchema.safeParse(expanded);
  if (!parsed.success) throw new ConfigError(source, parsed.error.issues.map(describeIssue));
  const config = parsed.data;
  for (const server of Object.values(config.servers)) server.cwd = path.resolve(baseDir, server.cwd);
  return config;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? issue.path.join('.') : '(top level)';
  if (issue.code === 'unrecognized_keys') {
    return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}; check the spelling against the README's config reference`;
  }
  if (issue.code === 'invalid_key') {
    return `${where}: ${issue.issues.map((inner) => inner.message).join('; ')}`;
  }
  if (issue.code === 'invalid_value' && 'values' in issue) {
    return `${where}: must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `${where}: ${issue.message}`;
}

const ENV_REF = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces ${VAR} and ${VAR:-default} in every string; `$$` is a literal `$`. */
function expandEnv(value: unknown, at: (string | number)[], env: NodeJS.ProcessEnv, problems: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (match, name: string | undefined, fallback: string | undefined) => {
      if (match === '$$') return '$';
      const found = env[name!];
      // As in the shell, ${VAR:-default} takes the default when VAR is unset or empty.
      if (found !== undefined && (found !== '' || fallback === undefined)) return found;
      if (fallback !== undefined) return fallback;
      problems.push(`${at.join('.') || '(top level)'}: environment variable ${name} is not set; set it, or write \${${name}:-default}`);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => expandEnv(item, [...at, i], env, problems));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = expandEnv(item, [...at, key], env, problems);
    return out;
  }
  return value;
}
