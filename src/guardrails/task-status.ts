// A task's status pushed on a listen stream (notifications/tasks, src/tasks/task-listen.ts) carries what
// tasks/get would: the task's result, its questions (inputRequests), its error, a statusMessage. It is judged
// as tasks/get's answer is, by the `results` rules of the tool that created the task, before it is written:
// redacted in a copy, or, when a rule blocks, shown as failed with the refusal as its error (a valid task
// status the caller's SDK reports, where a dropped one would leave it waiting). Loaded with guarded-call.ts.
import type { GuardrailSet } from '../../policy/guardrails/rule-set.js';
import type { GuardrailStage } from '../../policy/guardrails/settings.js';
import type { JsonObject } from '../../protocol/jsonrpc.js';
import { type GuardedCall, type GuardrailRecorder, judgeFor, record, refusalError } from './guarded-call.js';

const METHOD = 'notifications/tasks';
/** A task's own fields that say nothing of its content: kept in the failed status that replaces a blocked one. */
const TASK_BASE = ['taskId', 'createdAt', 'lastUpdatedAt', 'ttlMs', 'pollIntervalMs', '_meta'] as const;

/**
 * What the caller is shown of one task status of `server`'s task, created by `tool` (its /mcp name): `params`
 * itself when no rule applies or none finds anything, else a redacted copy, or the failed status a block gives.
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
  if (verdict.blocked === undefined) return verdict.value as JsonObject;
  const failed: JsonObject = { status: 'failed', error: refusalError('results', verdict.blocked) };
  for (const key of TASK_BASE) if (params[key] !== undefined) failed[key] = params[key];
  return failed;
}
