// The guardrails step of a request (docs/guardrails.md): the rules that apply to this caller, endpoint and
// item judge what goes up (arguments, and the Mcp-Param-* headers that mirror them) before the server sees it,
// and what comes back (the answer, and each progress or log message of a stream) before the caller sees it.
// It wraps McpCall.request, above the cache, so a cached answer is judged like a fresh one, on every endpoint
// and for both eras. Loaded by the edge on first use: a gateway without guardrails never reads this module.
import type { RequestOptions } from '../../bridge/upstream.js';
import type { AuditLog } from '../../policy/audit-log.js';
import type {
  CompiledRule,
  ContentFacts,
  ContentVerdict,
  GuardrailSet,
  GuardrailStage,
  ItemKind,
  RuleHit,
} from '../../policy/guardrails/index.js';
import { judgeContent, redactedCopy } from './content-scan.js';
import { changedStrings, redactParamHeaders } from './param-headers.js';
import { type Blocked, COMPLETION_SENT_UP, refusalError, SENT_UP, type SentUp } from './refusal.js';
import type { Principal } from '../../policy/principal.js';
import type { Target } from '../../policy/target.js';
import {
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
  /** /mcp's router, when /mcp is served: where a task's tool is looked up by its /mcp name, for its outputSchema. */
  readonly edge?: {
    readonly router: { resolve(server: string | undefined, message: JsonRpcRequest): Target } | undefined;
  };
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
function itemOf(call: GuardedCall, message: JsonRpcRequest): Item | undefined {
  const method = message.method;
  if (method === 'tools/call') return namedItem(call, 'tools', 'results');
  if (method === 'prompts/get') return namedItem(call, 'prompts', 'prompts');
  // A task is judged as the tool that created it: its result comes back with tasks/get (results), and the
  // caller's answers to its questions go up with tasks/update (arguments, as a retry's inputResponses are).
  if ((method === 'tasks/get' || method === 'tasks/update') && call.task !== undefined)
    return {
      kind: 'tools',
      server: call.task.ref.server,
      name: call.taskTool,
      before: method === 'tasks/update' ? 'arguments' : undefined,
      after: 'results',
    };
  if (method === 'resources/read') return { ...resourceItem(call), before: undefined, after: 'resources' };
  // A completion's values are what the server suggests for an argument of a prompt or a resource template: that
  // item's content, judged as its messages or contents are (prompts, resources). What the caller typed so far,
  // and the arguments it gave before, go up as that item's arguments.
  if (method === 'completion/complete') {
    const ref = isObject(message.params?.ref) ? message.params.ref : undefined;
    return ref?.type === 'ref/prompt'
      ? namedItem(call, 'prompts', 'prompts')
      : { ...resourceItem(call), before: 'arguments', after: 'resources' };
  }
  return undefined;
}

/** A tool or prompt by name (a call, a prompt's messages, a prompt's completion): its arguments go up. */
function namedItem(call: GuardedCall, kind: 'tools' | 'prompts', after: GuardrailStage): Item {
  const target = call.target;
  const named = target.kind === 'tools' || target.kind === 'prompts' ? target : undefined;
  const server = named?.listed?.server ?? named?.server ?? call.server;
  return { kind, server, name: named?.publicName, before: 'arguments', after };
}

/** A resource by URI (a read, a resource template's completion): its owner and its URI (the owner's own, on /mcp). */
function resourceItem(call: GuardedCall): Pick<Item, 'kind' | 'server' | 'name'> {
  const target = call.target;
  const uri = target.kind === 'resources' ? (target.ownUri ?? target.uri) : undefined;
  const server = target.kind === 'resources' ? (target.owner ?? target.endpoint) : call.server;
  return { kind: 'resources', server: server ?? call.server, name: typeof uri === 'string' ? uri : undefined };
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
  const item = itemOf(call, message);
  if (item === undefined) return send(message, options);
  const facts = (stage: GuardrailStage): ContentFacts => ({
    principal: call.principal,
    endpoint: call.path,
    stage,
    server: item.server,
    kind: item.kind,
    name: item.name,
  });
  const audit: Audit = (hit, stage) => record(recorder, call, message.method, item.name, hit, stage);
  const judge = judgeFor(set, recorder, call, message.method, facts);
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
  const broken = await resultSchemaBroken(call, message.method, response.result, result);
  if (broken !== undefined) {
    const hit = verdict.hits.find((h) => h.action === 'redact')!;
    return refusal(message, item.after, { hit, why: broken });
  }
  // A new object: the one given may carry its cached serialisation, which says what the copy no longer does.
  return { jsonrpc: '2.0', id: response.id, result };
}

/**
 * When a redacted tool result no longer meets its tool's outputSchema: why. A tools/call's result is checked against
 * the schema of the tool the router placed; a task's (tasks/get's `result`) against the tool that created the task.
 */
function resultSchemaBroken(
  call: GuardedCall,
  method: string,
  original: JsonObject,
  redacted: JsonObject,
): Promise<string | undefined> | undefined {
  if (method === 'tools/call')
    return schemaBroken(call.target.kind === 'tools' ? call.target.listed?.definition : undefined, original, redacted);
  if (method === 'tasks/get')
    return schemaBroken(taskToolDefinition(call, call.taskTool), original.result, redacted.result);
  return undefined;
}

/**
 * Why a tool's redacted result may not be sent, or undefined when it may (output-schema.ts): its structuredContent
 * breaks the outputSchema of `definition` (the tool as listed) that the server's own met. Without a definition
 * (the lists were never read) nothing is checked.
 */
export async function schemaBroken(
  definition: JsonObject | undefined,
  original: unknown,
  redacted: unknown,
): Promise<string | undefined> {
  const schema = definition?.outputSchema;
  if (schema === undefined || !isObject(redacted) || redacted.structuredContent === undefined) return undefined;
  const { breaksOutputSchema } = await import('./output-schema.js');
  const before = isObject(original) ? original.structuredContent : undefined;
  return breaksOutputSchema(schema, before, redacted.structuredContent);
}

/** The listed definition of the tool that created a task, by its /mcp name; undefined without /mcp or a list. */
export function taskToolDefinition(call: GuardedCall, tool: string | undefined): JsonObject | undefined {
  const router = call.edge?.router;
  if (router === undefined || tool === undefined) return undefined;
  const target = router.resolve(undefined, { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: tool } });
  return target.kind === 'tools' ? target.listed?.definition : undefined;
}

type Audit = (hit: RuleHit, stage: GuardrailStage) => void;
type Rules = readonly CompiledRule[];
/** judgeContent, or, when a rule asks a webhook, src/guardrails/webhook.ts's judgeWithWebhooks. */
export type Judge = (value: unknown, rules: Rules, stage: GuardrailStage) => Promise<ContentVerdict> | ContentVerdict;

/** The judge of one request's (or one listen's) content: by the built-in detectors, and a rule's webhooks. */
export function judgeFor(
  set: GuardrailSet,
  recorder: GuardrailRecorder,
  call: GuardedCall,
  method: string,
  facts: (stage: GuardrailStage) => ContentFacts,
): Judge {
  return async (value, rules, stage) => {
    if (!set.asksWebhooks || !rules.some((rule) => rule.webhooks.length > 0)) return judgeContent(value, rules);
    webhookStep ??= await import('./webhook.js');
    const context = { ...facts(stage), principal: call.principal.id, method };
    return webhookStep.judgeWithWebhooks(value, rules, context, (rule, hook, outcome) =>
      recorder.webhook?.(rule, hook, outcome),
    );
  };
}

/**
 * What goes up, before the server sees it: the refusal when a rule blocks, else undefined, with what a rule
 * redacts changed in place (the message is this request's own, and its audit line reads the same object).
 */
async function judgeArguments(
  rules: Rules,
  message: JsonRpcRequest,
  options: RequestOptions,
  audit: Audit,
  judge: Judge,
): Promise<JsonRpcResponse | undefined> {
  if (rules.length === 0) return undefined;
  for (const field of message.method === 'completion/complete' ? COMPLETION_SENT_UP : SENT_UP) {
    const sent = message.params?.[field];
    if (sent === undefined) continue;
    const verdict = await judge(sent, rules, 'arguments');
    for (const hit of verdict.hits) audit(hit, 'arguments');
    if (verdict.blocked) {
      // The request's audit line (audit.arguments) reads these arguments: it must not hold what was found.
      const blocking = rules.find((rule) => rule.name === verdict.blocked!.hit.rule)!;
      // A webhook's findings cannot be redacted after the fact (its answer was a block, or none): keep nothing.
      overwrite(sent, blocking.webhooks.length > 0 ? {} : redactedCopy(sent, blocking.detectors));
      return refusal(message, 'arguments', verdict.blocked, field);
    }
    if (verdict.value === sent) continue;
    // A webhook's spans are not patterns the headers could be scanned with: its headers follow the arguments.
    const changed =
      field === 'arguments' && rules.some((rule) => rule.webhooks.length > 0)
        ? changedStrings(sent, verdict.value)
        : undefined;
    if (isObject(sent)) overwrite(sent, verdict.value);
    else message.params![field] = verdict.value as JsonObject;
    // Mcp-Param-* headers mirror arguments only.
    if (field === 'arguments') redactParamHeaders(options, rules, changed);
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

function refusal(
  message: JsonRpcRequest,
  stage: GuardrailStage,
  blocked: Blocked,
  field: SentUp = 'arguments',
): JsonRpcResponse {
  const { code, message: words, data } = refusalError(stage, blocked, field);
  return errorResponse(message.id, code, words, data);
}

/** A rule's finding: counted, and an audit line (`target`: the item's /mcp name). */
export function record(
  recorder: GuardrailRecorder,
  call: GuardedCall,
  method: string,
  target: string | undefined,
  hit: RuleHit,
  stage: GuardrailStage,
): void {
  recorder.decision(hit.rule, hit.action, stage);
  recorder.audit?.record({
    principal: call.principal.id,
    via: call.principal.via,
    endpoint: call.path,
    method,
    ...(target === undefined ? {} : { target }),
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
