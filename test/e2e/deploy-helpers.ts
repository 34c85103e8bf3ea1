import { PROBE_PATHS } from '../../src/edge/ops-routes.js';
// What the deployment-file tests share: the gateway's own routes and config, read from the sources, so the
// files are checked against what the gateway does rather than against copies of it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { parseConfig, type GatewayConfig } from '../../src/config/config.js';
import { ROOT } from './harness.js';

export const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');
export const yamlOf = (file: string): any => parseYaml(read(file), { merge: true });
export const yamlDocs = (file: string): any[] => parseAllDocuments(read(file)).map((doc) => doc.toJS());

/** The GET routes the gateway serves to anyone (health), as src/edge/ops-routes.ts declares them. */
export function healthRoutes(): string[] {
  return [...PROBE_PATHS];
}

/** Variables a config's values read with no default (comments aside): the environment must supply them. */
export function requiredVariables(text: string): string[] {
  const strings: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') strings.push(value);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(parseYaml(text));
  const names = strings
    .flatMap((s) => [...s.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}/g)])
    .filter((m) => m[2] === undefined)
    .map((m) => m[1]!);
  return [...new Set(names)].filter((name) => name !== 'CONFIG_DIR').sort();
}

/** The config as the gateway would load it from `file` with `env` (values filled in where compose has ${…}). */
export function loadWith(file: string, env: Record<string, string>): GatewayConfig {
  return parseConfig(parseYaml(read(file)), file, path.dirname(path.join(ROOT, file)), env);
}

/** The longest a replica takes from SIGTERM to exit, in seconds (children stop in parallel). */
export function drainSeconds(config: GatewayConfig): number {
  const children = Object.values(config.servers).map((server) =>
    server.transport === 'stdio' ? 3 * server.shutdownGraceMs : 0,
  );
  return (config.listen.drainDelayMs + config.listen.drainMs + Math.max(0, ...children)) / 1000;
}

/** A stand-in value for every variable, long enough for the settings that need 16 characters. */
export function placeholders(names: string[]): Record<string, string> {
  const value = (name: string): string =>
    name.endsWith('REDIS_URL')
      ? 'redis://redis:6379'
      : name.endsWith('_URL')
        ? 'http://10.0.0.1:8080'
        : `placeholder-for-${name}`;
  return Object.fromEntries(names.map((name) => [name, value(name)]));
}
