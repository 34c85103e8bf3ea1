// src/guardrails/: the step that applies guardrails to a request (guarded-call.ts) and to a task status pushed
// on a listen (task-status.ts). The edge imports this face with import() at the first request under guardrails,
// so a config without guardrails loads none of it.
export { guardedRequest } from './guarded-call.js';
export type { GuardrailRecorder } from './guarded-call.js';
export { judgedTaskStatus } from './task-status.js';
