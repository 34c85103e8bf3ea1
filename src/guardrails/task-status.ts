// A task's status pushed on a listen stream (notifications/tasks, src/tasks/task-listen.ts) carries what
// tasks/get would: the task's result, its questions (inputRequests), its error, a statusMessage. It is judged
// as tasks/get's answer is, by the `results` rules of the tool that created the task, before it is written:
// redacted in a copy, or, when a rule blocks (or a redacted result would break the tool's outputSchema, as for a
// tools/call), shown as failed with the refusal as its error (a valid task status the caller's SDK reports, where
// a dropped one would leave it waiting). Loaded with guarded-call.ts.
import type { GuardrailSet, GuardrailStage } from '../../policy/guardrails/index.js';
import type { JsonObject } from '../../protocol/jsonrpc.js';
import {
  type GuardedCall,
  type GuardrailRecorder,
  judgeFor,
  record,
  schemaBroken,
  taskToolDefinition,
} from './guarded-call.js';
import { refusalError } from './refusal.js';

const METHOD = 'notifications/tasks';
/** A task's own fields that say nothing of its content: kept in the failed status that replaces a blocked one. */
const TASK_BASE = ['taskId', 'createdAt', 'lastUpdatedAt', 'ttlMs', 'pollIntervalMs', '_meta'] as const;

/**
 * What the caller is shown of one task status of `server`'s task, created by `tool` (its /mcp name): `params`
 * itself when no rule applies or none finds anything, else a redacted copy, or the failed status a block gives (or
 * a redaction the tool's outputSchema refuses).
 */
export async function judgedTaskStatus(
  set: GuardrailSet,
  call: GuardedCall,
  recorder: GuardrailRecorder,
  server: string,
  tool: string | undefined,
  params: JsonObject,
): Promise<JsonObject> {
  if (!set.watches('results')) return params;
  const facts = (stage: GuardrailStage) => ({
    principal: call.principal,
    endpoint: call.path,
    stage,
    server,
    kind: 'tools' as const,
    name: tool,
  });
  const rules = set.rulesFor(facts('results'));
  if (rules.length === 0) return params;
  const verdict = await judgeFor(set, recorder, call, METHOD, facts)(params, rules, 'results');
  for (const hit of verdict.hits) record(recorder, call, METHOD, tool, hit, 'results');
  let blocked = verdict.blocked;
  if (blocked === undefined) {
    const shown = verdict.value as JsonObject;
    if (shown === params) return params;
    const broken = await schemaBroken(taskToolDefinition(call, tool), params.result, shown.result);
    if (broken === undefined) return shown;
    blocked = { hit: verdict.hits.find((hit) => hit.action === 'redact')!, why: broken };
  }
  const failed: JsonObject = { status: 'failed', error: refusalError('results', blocked) };
  for (const key of TASK_BASE) if (params[key] !== undefined) failed[key] = params[key];
  return failed;
}
