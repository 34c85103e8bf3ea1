// src/tasks/: the Tasks extension's steps (task ids, task methods, task listens), asked by the edge on every
// call path, never calling back.
export { declaresTasks, refuseUndeclaredTask } from './task-guard.js';
export { TaskIdCodec } from './task-ids.js';
export { followTasks } from './task-listen.js';
export {
  isTaskListen,
  issueTaskIds,
  judgeTask,
  mayAnswerTask,
  openTask,
  refuseUndeclared,
  sendTask,
} from './task-step.js';
export type { OpenedTask } from './task-step.js';
