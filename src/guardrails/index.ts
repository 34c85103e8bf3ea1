// src/guardrails/: the step that applies guardrails to a request (guarded-call.ts) and to a task status pushed
// on a listen (task-status.ts). The edge imports this face with import() at the first request under guardrails,
// so a config without guardrails loads none of it; the task-status step, at the first task status under
// guardrails, through loadTaskStatus.
export { guardedRequest } from './guarded-call.js';
export type { GuardrailRecorder } from './guarded-call.js';

/** task-status.ts: a task status judged by the rules of the tool that created the task. */
export const loadTaskStatus = () => import('./task-status.js');
export type TaskStatusStep = Awaited<ReturnType<typeof loadTaskStatus>>;
