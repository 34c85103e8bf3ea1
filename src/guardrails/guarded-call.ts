// The guardrails step of a request (docs/guardrails.md): the rules that apply to this caller, endpoint and
// item judge what goes up (arguments, and the Mcp-Param-* headers that mirror them) before the server sees it,
// and what comes back (the answer, and each progress or log message of a stream) before the caller sees it.
// It wraps McpCall.request, above the cache, so a cached answer is judged like a fresh one, on every endpoint
// and for both eras. Loaded by the edge on first use: a gateway without guardrails never reads this module.
import type { RequestOptions } from '../../bridge/upstream.js';
import { encodeHeaderValue } from '../../bridge/http/mcp-headers.js';
import type { AuditLog } from '../../policy/audit-log.js';
import type { CompiledRule, ContentFacts, GuardrailSet, ItemKind } from '../../policy/guardrails/rule-set.js';
import {
  type ContentVerdict,
  judgeContent,
  redactedCopy,
  redactText,
  type RuleHit,
} from '../../policy/guardrails/scan.js';
import type { GuardrailStage } from '../../policy/guardrails/settings.js';
import type { Principal } from '../../policy/principal.js';
import type { Target } from '../../policy/target.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonObject,
  type JsonRpcFailure,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';

/** The request as the edge knows it once judged. */
export interface GuardedCall {
  readonly principal: Principal;
  /** The endpoint path: `/mcp`, `/servers/<name>/mcp`, `/profiles/<name>/mcp`, `/search/mcp`. */
  readonly path: string;
  readonly target: Target;
  /** The endpoint's server on /servers/<name>/mcp; undefined on /mcp and its views. */
  readonly server: string | undefined;
  /** A Tasks method's task: the server that owns it. */
  readonly task?: { readonly ref: { readonly server: string } } | undefined;
  /** The /mcp name of the tool that created that task, once judged (src/tasks/task-step.ts). */
  readonly taskTool?: string | undefined;
}

/** Where decisions go: the audit log and the per-rule counter. */
export interface GuardrailRecorder {
  readonly audit: AuditLog | undefined;
  decision(rule: string, action: string, stage: string): void;
  /** A webhook detector's outcome (src/guardrails/webhook.ts): allow, redact, block, timeout, unreachable... */
  webhook?(rule: string, webhook: string, outcome: string): void;
}

/** src/guardrails/webhook.ts, once a rule that asks a webhook has applied. */
let webhookStep: typeof import('./webhook.js') | undefined;

type Send = (message: JsonRpcRequest, options: RequestOptions) => Promise<JsonRpcResponse>;

/** What a method's content is: the item it is about, and the stages before and after the server. */
interface Item {
  kind: ItemKind;
  server: string | undefined;
  name: string | undefined;
  before: GuardrailStage | undefined;
  after: GuardrailStage;
}

/** The item a request is about, for the methods whose content guardrails read; undefined for the others. */
function itemOf(call: GuardedCall, method: string): Item | undefined {
  const target = call.target;
  if (method === 'tools/call' || method === 'prompts/get') {
    const named = target.kind === 'tools' || target.kind === 'prompts' ? target : undefined;
    const server = named?.listed?.server ?? named?.server ?? call.server;
    const kind = method === 'tools/call' ? 'tools' : 'prompts';
    return {
      kind,
      server,
      name: named?.publicName,
      before: 'arguments',
      after: kind === 'tools' ? 'results' : 'prompts',
    };
  }
  // A task's result comes back with tasks/get: judged as the result of the tool that created the task.
  if (method === 'tasks/get' && call.task !== undefined)
    return { kind: 'tools', server: call.task.ref.server, name: call.taskTool, before: undefined, after: 'results' };
  if (method === 'resources/read') {
    const uri = target.kind === 'resources' ? (target.ownUri ?? target.uri) : undefined;
    const server = target.kind === 'resources' ? (target.owner ?? target.endpoint) : call.server;
    return {
      kind: 'resources',
      server: server ?? call.server,
      name: typeof uri === 'string' ? uri : undefined,
      before: undefined,
      after: 'resources',
    };
  }
  return undefined;
}

/** Sends `message` by `send`, with the guardrails that apply to it on both sides. */
export async function guardedRequest(
  set: GuardrailSet,
  call: GuardedCall,
  recorder: GuardrailRecorder,
  message: JsonRpcRequest,
  options: RequestOptions,
  send: Send,
): Promise<JsonRpcResponse> {
  const item = itemOf(call, message.method);
  if (item === undefined) return send(message, options);
  const facts = (stage: GuardrailStage): ContentFacts => ({
    principal: call.principal,
    endpoint: call.path,
    stage,
    server: item.server,
    kind: item.kind,
    name: item.name,
  });
  const audit: Audit = (hit, stage) => record(recorder, call, message, item, hit, stage);
  const judge: Judge = async (value, rules, stage) => {
    if (!set.asksWebhooks || !rules.some((rule) => rule.webhooks.length > 0)) return judgeContent(value, rules);
    webhookStep ??= await import('./webhook.js');
    const context = { ...facts(stage), principal: call.principal.id, method: message.method };
    return webhookStep.judgeWithWebhooks(value, rules, context, (rule, hook, outcome) =>
      recorder.webhook?.(rule, hook, outcome),
    );
  };
  if (item.before !== undefined && set.watches(item.before)) {
    const refused = await judgeArguments(set.rulesFor(facts(item.before)), message, options, audit, judge);
    if (refused !== undefined) return refused;
  }
  if (!set.watches(item.after)) return send(message, options);
  const rules = set.rulesFor(facts(item.after));
  if (rules.length === 0) return send(message, options);
  const stream = judgeStream(rules, options, (hit) => audit(hit, item.after), judge, item.after);
  const response = await send(message, options);
  await stream.judged;
  if (stream.blocked !== undefined) return refusal(message, item.after, stream.blocked);
  if (!('result' in response)) return judgedError(response, rules, message, item.after, audit, judge);
  const verdict = await judge(response.result, rules, item.after);
  for (const hit of verdict.hits) audit(hit, item.after);
  if (verdict.blocked) return refusal(message, item.after, verdict.blocked);
  if (verdict.value === response.result) return response;
  const result = verdict.value as JsonObject;
  const broken = await schemaBroken(call.target, response.result, result);
  if (broken !== undefined) {
    const hit = verdict.hits.find((h) => h.action === 'redact')!;
    return refusal(message, item.after, { hit, why: broken });
  }
  // A new object: the one given may carry its cached serialisation, which says what the copy no longer does.
  return { jsonrpc: '2.0', id: response.id, result };
}

/** When a tool's redacted structuredContent no longer meets its outputSchema: why (output-schema.ts). */
async function schemaBroken(target: Target, original: JsonObject, redacted: JsonObject): Promise<string | undefined> {
  const schema = target.kind === 'tools' ? target.listed?.definition?.outputSchema : undefined;
  if (schema === undefined || redacted.structuredContent === undefined) return undefined;
  const { breaksOutputSchema } = await import('./output-schema.js');
  return breaksOutputSchema(schema, original.structuredContent, redacted.structuredContent);
}

type Audit = (hit: RuleHit, stage: GuardrailStage) => void;
type Rules = readonly CompiledRule[];
type Blocked = NonNullable<ContentVerdict['blocked']>;
/** judgeContent, or, when a rule asks a webhook, src/guardrails/webhook.ts's judgeWithWebhooks. */
type Judge = (value: unknown, rules: Rules, stage: GuardrailStage) => Promise<ContentVerdict> | ContentVerdict;

/**
 * Arguments before the server sees them: the refusal when a rule blocks, else undefined, with what a rule
 * redacts changed in place (the message is this request's own, and its audit line reads the same object).
 */
async function judgeArguments(
  rules: Rules,
  message: JsonRpcRequest,
  options: RequestOptions,
  audit: Audit,
  judge: Judge,
): Promise<JsonRpcResponse | undefined> {
  const args = message.params?.arguments;
  if (rules.length === 0 || args === undefined) return undefined;
  const verdict = await judge(args, rules, 'arguments');
  for (const hit of verdict.hits) audit(hit, 'arguments');
  if (verdict.blocked) {
    // The request's audit line (audit.arguments) reads these arguments: it must not hold what was found.
    const blocking = rules.find((rule) => rule.name === verdict.blocked!.hit.rule)!;
    // A webhook's findings cannot be redacted after the fact (its answer was a block, or none): keep nothing.
    overwrite(args, blocking.webhooks.length > 0 ? {} : redactedCopy(args, blocking.detectors));
    return refusal(message, 'arguments', verdict.blocked);
  }
  if (verdict.value !== args) {
    // A webhook's spans are not patterns the headers could be scanned with: its headers follow the arguments.
    const changed = rules.some((rule) => rule.webhooks.length > 0) ? changedStrings(args, verdict.value) : undefined;
    if (isObject(args)) overwrite(args, verdict.value);
    else message.params!.arguments = verdict.value as JsonObject;
    redactParamHeaders(options, rules, changed);
  }
  return undefined;
}

/**
 * A stream's messages (progress, logs) judged before they are written; one that must be blocked is dropped,
 * with every one after it, and `blocked` set: the answer is then replaced by the refusal, since part of it
 * already went unseen. When a rule asks a webhook, each message waits for its answer, in order (`judged`
 * settles once every message so far is written or dropped; the answer waits for it).
 */
function judgeStream(
  rules: Rules,
  options: RequestOptions,
  audit: (hit: RuleHit) => void,
  judge: Judge,
  stage: GuardrailStage,
): { blocked?: Blocked; judged?: Promise<void> } {
  const stream: { blocked?: Blocked; judged?: Promise<void> } = {};
  const onNotification = options.onNotification;
  if (onNotification === undefined) return stream;
  const pass = (notification: JsonRpcNotification, params: JsonObject, verdict: ContentVerdict): void => {
    for (const hit of verdict.hits) audit(hit);
    if (verdict.blocked) stream.blocked = verdict.blocked;
    else
      onNotification(
        verdict.value === params ? notification : { ...notification, params: verdict.value as JsonObject },
      );
  };
  const asks = rules.some((rule) => rule.webhooks.length > 0);
  options.onNotification = (notification: JsonRpcNotification) => {
    if (stream.blocked !== undefined) return;
    const params = notification.params;
    if (params === undefined) return onNotification(notification);
    if (!asks) return pass(notification, params, judgeContent(params, rules));
    stream.judged = (stream.judged ?? Promise.resolve()).then(async () => {
      if (stream.blocked === undefined) pass(notification, params, await judge(params, rules, stage));
    });
    // Handled here so a request whose send failed first cannot leave it unhandled; the answer still awaits it.
    stream.judged.catch(() => {});
  };
  return stream;
}

/** A server's error can echo what it was sent or holds (an invalid key, a record): judged as its answer is. */
async function judgedError(
  response: JsonRpcFailure,
  rules: Rules,
  message: JsonRpcRequest,
  stage: GuardrailStage,
  audit: Audit,
  judge: Judge,
): Promise<JsonRpcResponse> {
  const { error } = response;
  const said = error.data === undefined ? { message: error.message } : { message: error.message, data: error.data };
  const verdict = await judge(said, rules, stage);
  for (const hit of verdict.hits) audit(hit, stage);
  if (verdict.blocked) return refusal(message, stage, verdict.blocked);
  if (verdict.value === said) return response;
  const redacted = verdict.value as { message: string; data?: unknown };
  return errorResponse(response.id ?? null, error.code, redacted.message, redacted.data);
}

/** Gives `target` the keys and values of `source` (both JSON objects), so every holder of it sees the change. */
function overwrite(target: unknown, source: unknown): void {
  if (!isObject(target) || !isObject(source)) return;
  for (const key of Object.keys(target)) if (!(key in source)) Reflect.deleteProperty(target, key);
  Object.assign(target, source);
}

/**
 * The client's Mcp-Param-* headers mirror arguments (an HTTP upstream sees them): a redacted argument must not
 * go up in its header copy, so each header value is redacted by the same rules.
 */
export function redactParamHeaders(
  options: RequestOptions,
  rules: Rules,
  redactedArguments?: ReadonlyMap<string, string>,
): void {
  const headers = options.forwardHeaders;
  if (headers === undefined) return;
  const detectors = rules.flatMap((rule) => (rule.action === 'redact' ? rule.detectors : []));
  let changed: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(headers)) {
    const plain = decodeHeaderValue(value);
    const redacted = redactedArguments?.get(plain) ?? redactText(plain, detectors);
    if (redacted !== plain) (changed ??= { ...headers })[name] = encodeHeaderValue(redacted);
  }
  if (changed !== undefined) options.forwardHeaders = changed;
}

/** Each string of `before` that `after` (a redacted copy, the same shape) holds changed, with what it became. */
function changedStrings(before: unknown, after: unknown): Map<string, string> {
  const changed = new Map<string, string>();
  const stack: [unknown, unknown][] = [[before, after]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [was, now] = next;
    if (typeof was === 'string') {
      if (typeof now === 'string' && now !== was) changed.set(was, now);
    } else if (isObject(was) && isObject(now)) {
      for (const key of Object.keys(was)) stack.push([was[key], now[key]]);
    } else if (Array.isArray(was) && Array.isArray(now)) {
      for (const [i, item] of was.entries()) stack.push([item, now[i]]);
    }
  }
  return changed;
}

/** An Mcp-Param-* value as its argument was: the `=?base64?…?=` form decoded (bridge/http/mcp-headers.ts). */
function decodeHeaderValue(value: string): string {
  const sentinel = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(value);
  return sentinel === null ? value : Buffer.from(sentinel[1]!, 'base64').toString('utf8');
}

function refusal(message: JsonRpcRequest, stage: GuardrailStage, blocked: Blocked): JsonRpcResponse {
  const { hit, why } = blocked;
  const where = stage === 'arguments' ? 'the arguments' : `the ${stage === 'results' ? 'result' : stage}`;
  const data = { guardrail: hit.rule, stage, detectors: hit.detectors };
  if (hit.webhookFailure !== undefined)
    return errorResponse(
      message.id,
      ErrorCode.InvalidParams,
      `Refused by guardrail ${hit.rule}: ${hit.webhookFailure}, so ${where} could not be judged; ask an operator ` +
        `(guardrails[].name ${hit.rule}: its webhook's failOpen is false)`,
      data,
    );
  return errorResponse(
    message.id,
    ErrorCode.InvalidParams,
    `Refused by guardrail ${hit.rule}: ${where} held ${hit.detectors.join(', ')}` +
      `${why === undefined ? '' : ` (${why})`}; ask an operator if this is wrong (guardrails[].name ${hit.rule})`,
    { guardrail: hit.rule, stage, detectors: hit.detectors },
  );
}

function record(
  recorder: GuardrailRecorder,
  call: GuardedCall,
  message: JsonRpcRequest,
  item: Item,
  hit: RuleHit,
  stage: GuardrailStage,
): void {
  recorder.decision(hit.rule, hit.action, stage);
  recorder.audit?.record({
    principal: call.principal.id,
    via: call.principal.via,
    endpoint: call.path,
    method: message.method,
    ...(item.name === undefined ? {} : { target: item.name }),
    decision: hit.action === 'block' ? 'deny' : 'allow',
    rule: `guardrail ${hit.rule}`,
    latencyMs: 0,
    guardrail: {
      action: hit.action,
      stage,
      detectors: hit.detectors,
      ...(hit.webhookFailure === undefined ? {} : { webhookFailure: hit.webhookFailure }),
    },
  });
}
