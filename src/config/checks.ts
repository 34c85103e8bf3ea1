// The checks a config file needs beyond its schema: across keys (prefix clashes on /mcp, authentication
// that cannot work, a gateway open to the network, policies that do not compile, profiles' renames), and the wording of
// a
// schema problem, so that config.ts stays the schema and the order of loading.
import type { z } from 'zod';
import { PolicyError, PolicySet } from '../../policy/allow-list.js';
import { GuardrailError, GuardrailSet, type KnownNames } from '../../policy/guardrails/index.js';
import type { GatewayConfig } from './config-schema.js';
import { profileProblems } from '../profiles/index.js';
import { isLoopbackHost } from '../../protocol/loopback.js';
import { unknownKeysMessage } from './unknown-keys.js';

/**
 * The checks across keys, each run only when nothing it reads was cut or came from an unset variable (so a
 * cut auth key does not become "nobody could call"). Policies may name servers that were cut: they exist.
 */
export function crossKeyProblems(config: GatewayConfig, cut: string[], serverNames: string[]): string[] {
  const touches = (...keys: string[]) => cut.some((at) => keys.some((key) => at === key || at.startsWith(`${key}.`)));
  return [
    ...(touches('aggregate') ? [] : prefixClashes(config)),
    ...(touches('auth', 'listen.host') || cut.includes('listen') ? [] : authProblems(config)),
    ...policyProblems(config, serverNames),
    ...guardrailProblems(config, serverNames),
    ...(touches('aggregate') ? [] : profileProblems(config.profiles, [...serverHeads(config).values()])),
    ...poolProblems(config),
  ];
}

/**
 * A pool sends each request to any of its children: right for a modern server, stateless by the spec, but a
 * 2025 server keeps session state (subscriptions, log level, roots) per connection. So a pool of a server
 * that is, or may turn out to be, 2025-era runs only when era: legacy says the risk was read and taken.
 */
function poolProblems(config: GatewayConfig): string[] {
  const problems: string[] = [];
  for (const [name, server] of Object.entries(config.servers)) {
    if (server.transport !== 'stdio' || server.instances === 1 || server.era !== 'auto') continue;
    problems.push(
      `servers.${name}.instances: ${server.instances} runs several children, each with its own session state if the ` +
        `server is 2025-era; ` +
        `set servers.${name}.era: modern if it speaks MCP 2026 (stateless, safe to pool), or era: legacy to pool a ` +
        `2025 server knowingly ` +
        '(see docs/configuration.md, "instances"), or remove instances',
    );
  }
  return problems;
}

/** Every server name the file gives, valid or not. */
export function writtenServerNames(expanded: unknown): string[] {
  const servers =
    expanded !== null && typeof expanded === 'object' && 'servers' in expanded ? expanded.servers : undefined;
  return servers !== null && typeof servers === 'object' ? Object.keys(servers) : [];
}

/**
 * On /mcp a name is `<prefix><separator><name>`. Two servers clash when one's prefix and separator begin
 * the other's (`a` + `__` begins `a__b` + `__`): `a__b__c` could then belong to either.
 */
function prefixClashes(config: GatewayConfig): string[] {
  const sep = config.aggregate.separator;
  const heads = Object.entries(config.servers)
    .map(([name, server]) => ({ name, head: (server.prefix ?? name) + sep }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const problems: string[] = [];
  for (const a of heads) {
    for (const b of heads) {
      if (a === b || !b.head.startsWith(a.head)) continue;
      if (a.head === b.head && a.name > b.name) continue; // an identical pair is reported once
      problems.push(
        `servers.${a.name} and servers.${b.name} could give two tools the same name on /mcp ` +
          `(${JSON.stringify(a.head)} begins ${JSON.stringify(b.head)}); ` +
          `set servers.${b.name}.prefix (or aggregate.separator) so that neither begins the other`,
      );
    }
  }
  return problems;
}

/** How each server's tool and prompt names begin on /mcp. */
export function serverHeads(config: GatewayConfig): Map<string, string> {
  return new Map(
    Object.entries(config.servers).map(([name, server]) => [
      name,
      (server.prefix ?? name) + config.aggregate.separator,
    ]),
  );
}

/** Policies that do not compile: bad globs, CEL that does not parse or type-check, unknown servers. */
function policyProblems(config: GatewayConfig, serverNames = Object.keys(config.servers)): string[] {
  try {
    PolicySet.compile(config.policies, new Set(serverNames), serverHeads(config));
    return [];
  } catch (error) {
    if (error instanceof PolicyError) return error.problems;
    throw error;
  }
}

/** Guardrails that apply to nobody or cannot work: unknown servers or endpoints, bad globs or detectors. */
function guardrailProblems(config: GatewayConfig, serverNames: string[]): string[] {
  if (config.guardrails.length === 0) return [];
  try {
    GuardrailSet.compile(config.guardrails, guardrailNames(config, serverNames));
    return [];
  } catch (error) {
    if (error instanceof GuardrailError) return error.problems;
    throw error;
  }
}

/** What a guardrail may name: the servers, and every endpoint path the config serves. */
export function guardrailNames(config: GatewayConfig, serverNames = Object.keys(config.servers)): KnownNames {
  const endpoints = ['/mcp', ...(config.search.enabled ? ['/search/mcp'] : [])];
  for (const name of serverNames) endpoints.push(`/servers/${name}/mcp`);
  for (const name of Object.keys(config.profiles)) endpoints.push(`/profiles/${name}/mcp`);
  return { servers: new Set(serverNames), endpoints: new Set(endpoints) };
}

/** Authentication that cannot work as configured, or a gateway open to the network to anyone. */
function authProblems(config: GatewayConfig): string[] {
  const problems: string[] = [];
  const auth = config.auth;
  const exposed = exposureProblem(config);
  if (exposed) problems.push(exposed);
  if (!auth) return problems;
  if (auth.jwt && auth.jwt.audience === undefined && auth.oauth.resource === undefined) {
    problems.push(
      "auth.jwt: set auth.oauth.resource (this gateway's public URL) or auth.jwt.audience: tokens are accepted only " +
        'when issued for this gateway',
    );
  }
  if (!auth.anonymous && auth.apiKeys.length === 0 && !auth.jwt) {
    problems.push('auth: nobody could call: add apiKeys or jwt, or set anonymous: true');
  }
  if (auth.oauth.scopes.length > 0 && !auth.jwt) {
    problems.push('auth.oauth.scopes: scopes are checked on JWT access tokens; add auth.jwt or remove the scopes');
  }
  return problems;
}

/** A gateway listening beyond loopback with nobody configured to check who calls. */
export function exposureProblem(config: GatewayConfig): string | undefined {
  if (config.auth || isLoopbackHost(config.listen.host)) return undefined;
  return (
    `listen.host ${config.listen.host} is reachable from other machines and there is no auth: section; ` +
    'add auth.apiKeys or auth.jwt (see docs/security.md), or set auth.anonymous: true to serve anyone who can reach it'
  );
}

export function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? issue.path.join('.') : '(top level)';
  if (where === '(top level)' && issue.code === 'invalid_type') {
    return (
      '(top level): the config is a map of sections, at least  servers: { everything: { command: node, args: ' +
      '[server.js] } }'
    );
  }
  if (where === 'servers' && issue.code === 'invalid_type') {
    return 'servers: add a servers: map, for example  servers: { everything: { command: node, args: [server.js] } }';
  }
  if (
    issue.code === 'invalid_type' &&
    issue.expected === 'string' &&
    (issue.path.includes('env') || issue.path.includes('headers'))
  ) {
    return `${where}: must be a string; put numbers and true/false in quotes, e.g. "8080"`;
  }
  if (issue.code === 'unrecognized_keys') return unknownKeysMessage(where, issue.keys);
  if (issue.code === 'invalid_key') {
    return `${where}: ${issue.issues.map((inner) => inner.message).join('; ')}`;
  }
  if (issue.code === 'invalid_union' && 'options' in issue && issue.options) {
    return `${where}: must be one of ${issue.options.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  if (issue.code === 'invalid_value' && 'values' in issue) {
    return `${where}: must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `${where}: ${issue.message}`;
}
