// Guardrail rules compiled once per config load, and chosen per request the way policies choose: by principal
// (ids, groups), server, tool/prompt/resource globs over /mcp names (policy/globs.ts, the policies' own
// matcher), endpoint and stage. A rule that could apply to nobody is a load error naming the key to change.
import type { Matcher } from '../globs.js';
import { anyOf, checkGlob } from '../globs.js';
import type { Principal } from '../principal.js';
import { BUILT_IN_NAMES, builtInDetector, type Detector } from './detectors.js';
import { isSecureOrLoopback } from '../../protocol/loopback.js';
import { customDetector } from './custom-regex.js';
import type { ScanRule } from './scan.js';
import type { GuardrailAction, GuardrailSetting, GuardrailStage } from './settings.js';

/** A webhook detector as the rule holds it: every default applied (src/guardrails/webhook.ts calls it). */
export interface WebhookSpec {
  readonly url: string;
  readonly name: string;
  readonly timeoutMs: number;
  readonly failOpen: boolean;
  readonly headers: Readonly<Record<string, string>>;
  /** Where it is written, for messages: `guardrails[0] (name).detect[1]`. */
  readonly at: string;
}

export const WEBHOOK_TIMEOUT_MS = 2000;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

export type ItemKind = 'tools' | 'prompts' | 'resources';

/** What a request's content is, for choosing the rules that apply to it. */
export interface ContentFacts {
  readonly principal: Principal;
  /** The path the request came in on: `/mcp`, `/servers/<name>/mcp`, `/profiles/<name>/mcp`, `/search/mcp`. */
  readonly endpoint: string;
  readonly stage: GuardrailStage;
  /** The upstream serving it; undefined when none was placed. */
  readonly server: string | undefined;
  readonly kind: ItemKind;
  /** Its /mcp name (a resource: its URI); undefined when the caller sent no string. */
  readonly name: string | undefined;
}

export interface CompiledRule extends ScanRule {
  readonly action: GuardrailAction;
  readonly stages: ReadonlySet<GuardrailStage>;
  readonly everyone: boolean;
  readonly ids: ReadonlySet<string>;
  readonly groups: ReadonlySet<string>;
  readonly servers: ReadonlySet<string> | undefined;
  readonly endpoints: ReadonlySet<string> | undefined;
  /** Per kind; all undefined: every item. When any is set, kinds without globs are not chosen. */
  readonly globs: Readonly<Record<ItemKind, Matcher | undefined>>;
  /** Webhook detectors, asked per request beside `detectors` (empty for most rules). */
  readonly webhooks: readonly WebhookSpec[];
}

export class GuardrailError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'GuardrailError';
  }
}

/** The item kinds each stage looks at. */
const STAGE_KINDS: Readonly<Record<GuardrailStage, readonly ItemKind[]>> = {
  arguments: ['tools', 'prompts'],
  results: ['tools'],
  prompts: ['prompts'],
  resources: ['resources'],
};
const KINDS: readonly ItemKind[] = ['tools', 'prompts', 'resources'];
const MAX_MEMO = 10_000;

/** What the running gateway has, that a rule may name. */
export interface KnownNames {
  servers: ReadonlySet<string>;
  /** Every endpoint path served. */
  endpoints: ReadonlySet<string>;
}

export class GuardrailSet {
  private readonly memo = new Map<string, readonly CompiledRule[]>();
  private readonly stages: ReadonlySet<GuardrailStage>;
  /** Whether any rule asks a webhook: when none does, the step never loads src/guardrails/webhook.ts. */
  readonly asksWebhooks: boolean;

  private constructor(readonly rules: readonly CompiledRule[]) {
    this.stages = new Set(rules.flatMap((rule) => [...rule.stages]));
    this.asksWebhooks = rules.some((rule) => rule.webhooks.length > 0);
  }

  /** Compiles every rule; throws GuardrailError listing every problem. */
  static compile(settings: readonly GuardrailSetting[], known: KnownNames): GuardrailSet {
    const problems: string[] = [];
    const names = new Set<string>();
    const rules: CompiledRule[] = [];
    for (const [index, setting] of settings.entries()) {
      const at = `guardrails[${index}] (${setting.name})`;
      if (names.has(setting.name)) problems.push(`${at}.name: another rule has this name; give each its own`);
      names.add(setting.name);
      const rule = compileRule(setting, at, known, problems);
      if (rule) rules.push(rule);
    }
    if (problems.length) throw new GuardrailError(problems);
    return new GuardrailSet(rules);
  }

  /** Whether any rule looks at this stage (a cheap first question per request). */
  watches(stage: GuardrailStage): boolean {
    return this.stages.has(stage);
  }

  /** The rules that apply, in config order; memoised, as globs cost. */
  rulesFor(facts: ContentFacts): readonly CompiledRule[] {
    const { principal } = facts;
    const key = `${principal.id}\0${principal.groups.join('\u0001')}\0${facts.endpoint}\0${facts.stage}\0${
      facts.server ?? ''
    }\0${facts.kind}\0${facts.name ?? ''}`;
    let rules = this.memo.get(key);
    if (rules === undefined) {
      rules = this.rules.filter((rule) => applies(rule, facts));
      if (this.memo.size >= MAX_MEMO) this.memo.clear();
      this.memo.set(key, rules);
    }
    return rules;
  }
}

function applies(rule: CompiledRule, facts: ContentFacts): boolean {
  if (!rule.stages.has(facts.stage)) return false;
  const { principal } = facts;
  if (!rule.everyone && !rule.ids.has(principal.id) && !principal.groups.some((g) => rule.groups.has(g))) return false;
  if (rule.servers && (facts.server === undefined || !rule.servers.has(facts.server))) return false;
  if (rule.endpoints && !rule.endpoints.has(facts.endpoint)) return false;
  const hasGlobs = KINDS.some((kind) => rule.globs[kind] !== undefined);
  if (!hasGlobs) return true;
  const glob = rule.globs[facts.kind];
  return glob !== undefined && facts.name !== undefined && glob(facts.name);
}

function compileRule(
  setting: GuardrailSetting,
  at: string,
  known: KnownNames,
  problems: string[],
): CompiledRule | undefined {
  const before = problems.length;
  const principals = setting.principals;
  const ids = principals?.ids ?? [];
  const groups = principals?.groups ?? [];
  if (principals !== undefined && ids.length === 0 && groups.length === 0)
    problems.push(`${at}.principals: name ids or groups (or leave principals out for everyone) so the rule applies`);
  for (const server of setting.servers ?? []) {
    if (!known.servers.has(server))
      problems.push(
        `${at}.servers: no server is named ${JSON.stringify(server)}; servers are ${[...known.servers].join(', ')}`,
      );
  }
  if (setting.servers?.length === 0) problems.push(`${at}.servers: an empty list chooses no server; remove it`);
  for (const endpoint of setting.endpoints ?? []) {
    if (!known.endpoints.has(endpoint))
      problems.push(
        `${at}.endpoints: no endpoint is ${JSON.stringify(endpoint)}; endpoints are ${[...known.endpoints].join(', ')}`,
      );
  }
  if (setting.endpoints?.length === 0) problems.push(`${at}.endpoints: an empty list chooses nothing; remove it`);
  const globs = compileGlobs(setting, at, problems);
  const named = KINDS.filter((kind) => globs[kind] !== undefined);
  if (named.length > 0 && !setting.on.some((stage) => STAGE_KINDS[stage].some((kind) => named.includes(kind))))
    problems.push(
      `${at}.on: [${setting.on.join(', ')}] never looks at the ${named.join(' or ')} its globs name; ` +
        'add the stage (tools: arguments or results, prompts: arguments or prompts, resources: resources)',
    );
  const webhooks: WebhookSpec[] = [];
  const detectors = compileDetectors(setting, at, problems, webhooks);
  if (problems.length > before) return undefined;
  return {
    name: setting.name,
    action: setting.action,
    stages: new Set(setting.on),
    everyone: principals === undefined || ids.includes('*'),
    ids: new Set(ids),
    groups: new Set(groups),
    servers: setting.servers ? new Set(setting.servers) : undefined,
    endpoints: setting.endpoints ? new Set(setting.endpoints) : undefined,
    globs,
    detectors,
    webhooks,
  };
}

function compileGlobs(
  setting: GuardrailSetting,
  at: string,
  problems: string[],
): Record<ItemKind, Matcher | undefined> {
  const compiled = (kind: ItemKind): Matcher | undefined => {
    const list = setting[kind];
    if (list === undefined) return undefined;
    if (list.length === 0) problems.push(`${at}.${kind}: an empty list chooses nothing; remove it`);
    for (const glob of list) {
      const problem = checkGlob(glob);
      if (problem) problems.push(`${at}.${kind}: ${problem}`);
    }
    return anyOf(list);
  };
  return { tools: compiled('tools'), prompts: compiled('prompts'), resources: compiled('resources') };
}

function compileDetectors(
  setting: GuardrailSetting,
  at: string,
  problems: string[],
  webhooks: WebhookSpec[],
): Detector[] {
  const detectors: Detector[] = [];
  for (const [i, detector] of setting.detect.entries()) {
    if (typeof detector !== 'string' && 'webhook' in detector) {
      const spec = compileWebhook(detector, `${at}.detect[${i}]`, problems);
      if (spec) webhooks.push(spec);
      continue;
    }
    if (typeof detector === 'string') {
      const builtIn = builtInDetector(detector);
      if (builtIn) detectors.push(builtIn);
      else
        problems.push(
          `${at}.detect[${i}]: no built-in detector is named ${JSON.stringify(detector)}; they are ` +
            `${BUILT_IN_NAMES.join(', ')}, or write { name, regex } for one of your own`,
        );
      continue;
    }
    if (builtInDetector(detector.name))
      problems.push(`${at}.detect[${i}].name: ${JSON.stringify(detector.name)} is a built-in detector; pick another`);
    try {
      detectors.push(customDetector(detector.name, detector.regex));
    } catch (error) {
      problems.push(
        `${at}.detect[${i}].regex: ${JSON.stringify(detector.regex)} is not an RE2 expression: ` +
          `${(error as Error).message.split('\n')[0]}`,
      );
    }
  }
  return detectors;
}

function compileWebhook(
  setting: Extract<GuardrailSetting['detect'][number], { webhook: string }>,
  at: string,
  problems: string[],
): WebhookSpec | undefined {
  const name = setting.name ?? 'webhook';
  if (builtInDetector(name)) problems.push(`${at}.name: ${JSON.stringify(name)} is a built-in detector; pick another`);
  let url: URL | undefined;
  try {
    url = new URL(setting.webhook);
  } catch {
    problems.push(`${at}.webhook: ${JSON.stringify(setting.webhook)} is not a URL; write https://…`);
    return undefined;
  }
  if (!isSecureOrLoopback(url))
    problems.push(
      `${at}.webhook: ${url.origin} is not https; content goes to a webhook over https only ` +
        '(plain http only to this machine: localhost, 127.0.0.1, [::1])',
    );
  for (const header of Object.keys(setting.headers ?? {})) {
    if (!HEADER_NAME.test(header))
      problems.push(`${at}.headers: ${JSON.stringify(header)} is not a header name (letters, digits, - and the like)`);
    else if (header.toLowerCase() === 'content-type' || header.toLowerCase() === 'content-length')
      problems.push(`${at}.headers: ${header} is the gateway's to set; remove it`);
  }
  if (url.username !== '' || url.password !== '')
    problems.push(`${at}.webhook: put credentials in ${at}.headers (with \${VAR}), not in the URL`);
  return {
    url: url.href,
    name,
    timeoutMs: setting.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
    failOpen: setting.failOpen ?? false,
    headers: setting.headers ?? {},
    at,
  };
}
