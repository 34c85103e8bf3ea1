// Allow-list policies, compiled once per config load. A principal's grant is the union of what its
// policies allow, minus everything any of them denies (deny wins); with policies configured, whatever no
// policy allows is denied. Decisions are about the names callers see on /mcp (`<prefix><sep><name>`)
// and about resource URIs, always together with the server that offers the item, so that one policy's
// servers cannot lend themselves to another policy's globs.
import { LRUCache } from 'lru-cache';
import { compileCondition, type CallFacts, type Condition } from './conditions.js';
import { anyOf, checkGlob, type Matcher } from './globs.js';
import type { Principal } from './principal.js';
import type { PolicyRules, PolicySetting, RateLimitSetting } from './settings.js';

export type ItemKind = 'tools' | 'prompts' | 'resources';

export interface Decision {
  readonly allowed: boolean;
  /** Which rule decided, for the audit log. */
  readonly rule: string;
}

interface CompiledRules {
  /** undefined: any server. */
  servers: ReadonlySet<string> | undefined;
  tools: Matcher | undefined;
  prompts: Matcher | undefined;
  resources: Matcher | undefined;
}

interface CompiledPolicy {
  index: number;
  name: string;
  ids: ReadonlySet<string>;
  groups: ReadonlySet<string>;
  everyone: boolean;
  allow: CompiledRules;
  deny: CompiledRules;
  when: readonly { tool: Matcher; expr: string; check: Condition }[];
  pin: boolean;
  rateLimit: RateLimitSetting | undefined;
  /** The literal beginnings of its allowed tool and prompt globs (for reach, when it names no servers). */
  nameHeads: readonly string[];
  /** Whether it allows resources by glob on any server. */
  resourceGlobs: boolean;
}

interface CallRoute {
  policy: CompiledPolicy;
  conditions: CompiledPolicy['when'];
  allowed: Decision;
}

export class PolicyError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'PolicyError';
  }
}

const NO_POLICY: Decision = Object.freeze({ allowed: false, rule: 'no policy allows it' });
const MAX_MEMO = 50_000;
const MAX_MEMO_NAME = 256;

export class PolicySet {
  private readonly policies: readonly CompiledPolicy[];
  private readonly grants = new LRUCache<string, Grant>({ max: 10_000 });
  private readonly grantsByPolicies = new Map<string, Grant>();

  private constructor(
    policies: CompiledPolicy[],
    private readonly heads: ReadonlyMap<string, string>,
  ) {
    this.policies = policies;
  }

  /** Compiles every policy; throws PolicyError listing every problem (bad globs, bad CEL, unknown servers). */
  /**
   * `heads` gives, per server, how its tool and prompt names begin on /mcp (`<prefix><separator>`; default
   * `<server>__`), so that a policy of name globs reaches only servers whose names its globs can match.
   */
  static compile(
    settings: readonly PolicySetting[],
    knownServers: ReadonlySet<string>,
    heads?: ReadonlyMap<string, string>,
  ): PolicySet {
    const problems: string[] = [];
    const names = new Set<string>();
    const policies = settings.map((setting, index) => {
      const at = `policies[${index}] (${setting.name})`;
      if (names.has(setting.name))
        problems.push(
          `${at}: another policy has the name ${JSON.stringify(setting.name)}; give each a name of its own`,
        );
      names.add(setting.name);
      return compilePolicy(setting, index, at, knownServers, problems);
    });
    if (problems.length) throw new PolicyError(problems);
    return new PolicySet(policies, heads ?? new Map([...knownServers].map((server) => [server, `${server}__`])));
  }

  /** True when any policy is configured: then what no policy allows is denied. */
  get active(): boolean {
    return this.policies.length > 0;
  }

  get size(): number {
    return this.policies.length;
  }

  /** The grant of a principal; principals under the same policies share one (and its memo). */
  grantFor(principal: Principal): Grant {
    const principalKey = JSON.stringify([principal.id, principal.groups]);
    let grant = this.grants.get(principalKey);
    if (grant) return grant;
    const mine = this.policies.filter(
      (p) => p.everyone || p.ids.has(principal.id) || principal.groups.some((g) => p.groups.has(g)),
    );
    const key = mine.map((p) => p.index).join(',');
    grant = this.grantsByPolicies.get(key);
    if (!grant) {
      grant = new Grant(key, mine, this.heads);
      this.grantsByPolicies.set(key, grant);
    }
    this.grants.set(principalKey, grant);
    return grant;
  }
}

/** What one set of policies lets its principals see and call. */
export class Grant {
  private readonly memo = new Map<string, Decision>();
  private readonly reached = new Map<string, boolean>();
  private readonly routes = new Map<string, readonly CallRoute[]>();
  /** The most generous rate limit among the policies, if any sets one. */
  readonly rateLimit: RateLimitSetting | undefined;

  constructor(
    /** Identifies the set of policies: grants with the same key decide alike. */
    readonly key: string,
    private readonly policies: readonly CompiledPolicy[],
    private readonly heads: ReadonlyMap<string, string> = new Map(),
  ) {
    const limits = policies.map((p) => p.rateLimit).filter((l) => l !== undefined);
    this.rateLimit = limits.sort((a, b) => b.requestsPerMinute - a.requestsPerMinute)[0];
  }

  /** Whether anything on this server could be allowed (else the server does not exist for these principals). */
  reaches(server: string): boolean {
    let reached = this.reached.get(server);
    if (reached === undefined) {
      const denied = this.policies.some((p) => p.deny.servers?.has(server) && !hasAnyGlob(p.deny));
      const head = this.heads.get(server) ?? `${server}__`;
      reached =
        !denied &&
        this.policies.some((p) =>
          p.allow.servers
            ? p.allow.servers.has(server)
            : p.resourceGlobs || p.nameHeads.some((h) => h.startsWith(head) || head.startsWith(h)),
        );
      this.reached.set(server, reached);
    }
    return reached;
  }

  /**
   * Whether these principals may see everything the server offers: some policy allows the whole server (its
   * `servers` without globs) and no deny could take anything of it away. Only then may the server's free-text
   * `instructions` reach them, since they may name what is hidden.
   */
  seesAll(server: string): boolean {
    const whole = this.policies.some((p) => p.allow.servers?.has(server) && !hasAnyGlob(p.allow));
    const trimmed = this.policies.some((p) =>
      hasAnyGlob(p.deny) ? !p.deny.servers || p.deny.servers.has(server) : p.deny.servers?.has(server),
    );
    return whole && !trimmed;
  }

  /**
   * Whether an item may be seen (and, conditions aside, used). `server` is the upstream offering it;
   * undefined when that is not known, which only a policy without a servers list can allow.
   */
  allows(kind: ItemKind, server: string | undefined, name: string): Decision {
    // Long names (a caller's invention, likely) are judged afresh rather than kept.
    if (name.length > MAX_MEMO_NAME) return this.decide(kind, server, name);
    const key = `${kind}\0${server ?? ''}\0${name}`;
    let decision = this.memo.get(key);
    if (decision) return decision;
    decision = this.decide(kind, server, name);
    if (this.memo.size >= MAX_MEMO) this.memo.clear();
    this.memo.set(key, decision);
    return decision;
  }

  /** allows() plus the `when:` conditions of a tool call: allowed when some allowing policy's conditions all hold. */
  allowsCall(server: string, name: string, facts: CallFacts): Decision {
    const seen = this.allows('tools', server, name);
    if (!seen.allowed) return seen;
    const routes = this.callRoutes(server, name);
    let refusal: Decision | undefined;
    for (const route of routes) {
      let failure: string | undefined;
      for (const condition of route.conditions) {
        const outcome = condition.check(facts);
        if (!outcome.ok) {
          failure = `condition of policy ${route.policy.name} (${condition.expr}): ${outcome.why}`;
          break;
        }
      }
      if (failure === undefined) return route.allowed;
      refusal ??= { allowed: false, rule: failure };
    }
    return refusal ?? NO_POLICY;
  }

  /** The policies allowing a tool, each with the conditions that apply to it; memoised, as globs cost. */
  private callRoutes(server: string, name: string): readonly CallRoute[] {
    const key = `${server}\0${name}`;
    let routes = name.length > MAX_MEMO_NAME ? undefined : this.routes.get(key);
    if (!routes) {
      routes = this.policies
        .filter((policy) => allowedBy(policy.allow, 'tools', server, name))
        .map((policy) => ({
          policy,
          conditions: policy.when.filter((w) => w.tool(name)),
          allowed: { allowed: true, rule: `policy ${policy.name}` },
        }));
      if (this.routes.size >= MAX_MEMO) this.routes.clear();
      if (name.length <= MAX_MEMO_NAME) this.routes.set(key, routes);
    }
    return routes;
  }

  /** Whether an allowed tool's definition is pinned by one of the policies that allow it. */
  pins(server: string, name: string): boolean {
    return this.policies.some((p) => p.pin && allowedBy(p.allow, 'tools', server, name));
  }

  private decide(kind: ItemKind, server: string | undefined, name: string): Decision {
    for (const policy of this.policies) {
      if (deniedBy(policy.deny, kind, server, name)) return { allowed: false, rule: `deny in policy ${policy.name}` };
    }
    for (const policy of this.policies) {
      if (allowedBy(policy.allow, kind, server, name)) return { allowed: true, rule: `policy ${policy.name}` };
    }
    return NO_POLICY;
  }
}

function hasAnyGlob(rules: CompiledRules): boolean {
  return rules.tools !== undefined || rules.prompts !== undefined || rules.resources !== undefined;
}

/**
 * A policy allows an item when the item's server is among its servers (or it names none) and the item
 * matches its globs for that kind; with no globs for the kind, naming the server allows all of that kind.
 */
function allowedBy(rules: CompiledRules, kind: ItemKind, server: string | undefined, name: string): boolean {
  const globs = rules[kind];
  if (rules.servers) {
    if (server === undefined || !rules.servers.has(server)) return false;
    return globs === undefined || globs(name);
  }
  return globs?.(name) === true;
}

/** A deny names servers (everything on them), or globs (on any server), or both (those globs on those servers). */
function deniedBy(rules: CompiledRules, kind: ItemKind, server: string | undefined, name: string): boolean {
  const globs = rules[kind];
  if (rules.servers) {
    const onServer = server !== undefined && rules.servers.has(server);
    if (!onServer) return false;
    return hasAnyGlob(rules) ? globs?.(name) === true : true;
  }
  return globs?.(name) === true;
}

function compilePolicy(
  setting: PolicySetting,
  index: number,
  at: string,
  knownServers: ReadonlySet<string>,
  problems: string[],
): CompiledPolicy {
  const ids = setting.principals.ids ?? [];
  const groups = setting.principals.groups ?? [];
  if (ids.length === 0 && groups.length === 0) {
    problems.push(`${at}.principals: name ids or groups (or ids: ["*"] for everyone) so the policy applies to someone`);
  }
  const when = setting.when.flatMap((condition, i) => {
    const globProblem = checkGlob(condition.tool);
    if (globProblem) {
      problems.push(`${at}.when[${i}].tool: ${globProblem}`);
      return [];
    }
    try {
      return [{ tool: anyOf([condition.tool]), expr: condition.expr, check: compileCondition(condition.expr) }];
    } catch (error) {
      problems.push(
        `${at}.when[${i}].expr: ${JSON.stringify(condition.expr)} does not compile: ` +
          `${(error as Error).message.split('\n')[0]}`,
      );
      return [];
    }
  });
  return {
    index,
    name: setting.name,
    ids: new Set(ids),
    groups: new Set(groups),
    everyone: ids.includes('*'),
    allow: compileRules(setting.allow, `${at}.allow`, knownServers, problems),
    deny: compileRules(setting.deny, `${at}.deny`, knownServers, problems),
    when,
    pin: setting.pin,
    rateLimit: setting.rateLimit,
    nameHeads: [...(setting.allow.tools ?? []), ...(setting.allow.prompts ?? [])].map((glob) =>
      glob.slice(0, glob.search(/[*?{]|$/)),
    ),
    resourceGlobs: (setting.allow.resources?.length ?? 0) > 0,
  };
}

function compileRules(
  rules: PolicyRules,
  at: string,
  knownServers: ReadonlySet<string>,
  problems: string[],
): CompiledRules {
  for (const server of rules.servers ?? []) {
    if (!knownServers.has(server)) {
      problems.push(
        `${at}.servers: no server is named ${JSON.stringify(server)}; servers are ` +
          `${[...knownServers].join(', ') || '(none)'}`,
      );
    }
  }
  const globs = (kind: ItemKind): Matcher | undefined => {
    const list = rules[kind];
    if (list === undefined) return undefined;
    for (const glob of list) {
      const problem = checkGlob(glob);
      if (problem) problems.push(`${at}.${kind}: ${problem}`);
    }
    return anyOf(list);
  };
  return {
    servers: rules.servers ? new Set(rules.servers) : undefined,
    tools: globs('tools'),
    prompts: globs('prompts'),
    resources: globs('resources'),
  };
}

export type { CallFacts };
