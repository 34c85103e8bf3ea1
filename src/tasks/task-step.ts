// Tasks (io.modelcontextprotocol/tasks) at the edge, on every endpoint. A tools/call answered with a task
// gets the gateway's own task id (task-ids.ts) in place of the server's. tasks/get, tasks/update and
// tasks/cancel open that id before anything else: an id this principal was not given here (another
// principal's, a forged or altered one, one naming another server) is answered as an unknown task, the
// same words as for an id nobody issued. A good one is judged by policy as the tool that created the task
// (a tool the caller may no longer use: unknown task again), sent to the owning server with the server's
// own id, and the answer carries the gateway's id back. Nothing is cached (the cache keeps only lists,
// discovery and reads) and nothing is held: the id says everything.
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import { AUTHENTICATED, type Verdict } from '../../policy/guard.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import { META, TASKS_EXTENSION } from '../../protocol/mcp.js';
import type { TaskCall, TaskRefusal } from './task-call.js';
import { declaresTasks } from './task-guard.js';
import type { TaskRef } from './task-ids.js';

export type { OpenedTask, TaskCall, TaskRefusal } from './task-call.js';

/** What the gateway answers for a task id it will not serve to this caller: the spec's "task not found". */
export function unknownTask(id: JsonRpcId): JsonRpcResponse {
  return errorResponse(
    id,
    ErrorCode.InvalidParams,
    'Failed to retrieve task: Task not found. A task id is good only for the caller it was returned to, through ' +
      'this gateway (or a replica sharing its mrtr.secret), while its creating tool is still allowed; call the tool ' +
      'again for a new task',
  );
}

/**
 * Opens the task id of a task method: undefined when the request may go on (call.task is then set), else
 * the refusal (unknown task), which the edge writes and audits as a denial.
 */
export function openTask(call: TaskCall, message: JsonRpcRequest): TaskRefusal | undefined {
  if (!declaresTasks(message)) return refuseUndeclared(message);
  const given = message.params?.taskId;
  const ref = call.edge.tasks.open(given, call.principal.id);
  if (ref === undefined) return asUnknown(message, 'task id not issued to this principal by this gateway');
  if (!reachable(call, ref.server))
    return asUnknown(message, `task of server ${ref.server}, not served to this caller here`);
  call.task = { ref, given: given as string };
  return undefined;
}

/**
 * The judge step of a task method: policy's word on the tool that created the task, by name, for this caller
 * (and on a profile, whether it shows that tool). The call's own conditions on its arguments were judged
 * when it was made; a task method has none to judge. A refusal says only "unknown task": whether the task
 * exists is not the caller's to learn.
 */
export function judgeTask(call: TaskCall, message: JsonRpcRequest): Verdict {
  const verdict = taskDecision(call, call.task!.ref);
  call.taskTool = verdict.target;
  // Traced like the call that created it: the span names the tool, as a tools/call's does.
  if (call.span !== undefined && verdict.target !== undefined)
    call.span.setAttribute('gen_ai.tool.name', verdict.target);
  return verdict.allowed ? verdict : { ...verdict, refusal: unknownTask(message.id) };
}

/** Whether this caller may still use the tool that created the task (its /mcp name is the target). */
export function taskDecision(call: TaskCall, ref: TaskRef): Verdict {
  const router = call.edge.router;
  // Without /mcp there are no /mcp names for policies to name: a server's endpoint is judged as a whole.
  if (router === undefined) return AUTHENTICATED;
  const target = router.resolve(ref.server, {
    jsonrpc: '2.0',
    id: 0,
    method: 'tools/call',
    params: { name: ref.tool },
  });
  const name = target.kind === 'tools' ? target.publicName : undefined;
  if (name === undefined) return { allowed: false, rule: 'task of a tool with no name on /mcp' };
  const view = call.endpoint?.view;
  if (view !== undefined && view.outbound('tools', name) === undefined)
    return { allowed: false, rule: `task of a tool profile ${call.name} does not show`, target: name };
  const { guard } = call.security;
  if (guard === undefined || call.grant === undefined) return { ...AUTHENTICATED, target: name };
  const decision = call.grant.allows('tools', ref.server, name);
  return { allowed: decision.allowed, rule: decision.rule, target: name };
}

/** Sends a task method to the owning server under its own id; the gateway's id goes back in the answer. */
export async function sendTask(
  call: TaskCall,
  message: JsonRpcRequest,
  options: RequestOptions,
): Promise<JsonRpcResponse> {
  const { ref, given } = call.task!;
  const upstream = taskOwner(call, ref.server);
  if (upstream === undefined) return unknownTask(message.id);
  message.params!.taskId = ref.taskId;
  const answer = await upstream.request(message, options);
  message.params!.taskId = given;
  // The server's own id is never shown: not in a result, nor in an error's words (a server may quote it).
  if ('error' in answer) {
    const words = answer.error.message;
    return words.includes(ref.taskId)
      ? { ...answer, error: { ...answer.error, message: words.split(ref.taskId).join(given) } }
      : answer;
  }
  if (answer.result.taskId !== ref.taskId) return answer;
  return { jsonrpc: '2.0', id: answer.id, result: { ...answer.result, taskId: given } };
}

/**
 * A tools/call from a client that declared the extension: a task in the answer gets the gateway's id.
 * `server` and `tool` are the owner and its own name of the tool, read before the call.
 */
export function issueTaskIds(
  call: TaskCall,
  server: string | undefined,
  tool: unknown,
  answer: Promise<JsonRpcResponse>,
): Promise<JsonRpcResponse> {
  if (server === undefined || typeof tool !== 'string') return answer;
  return answer.then((response) => {
    if (!('result' in response) || response.result.resultType !== 'task' || typeof response.result.taskId !== 'string')
      return response;
    const taskId = call.edge.tasks.issue({ server, taskId: response.result.taskId, tool }, call.principal.id);
    return { jsonrpc: '2.0', id: response.id, result: { ...response.result, taskId } };
  });
}

/** Whether a tools/call may come back as a task the gateway must re-id: only when it declared the extension. */
export function mayAnswerTask(message: JsonRpcRequest): boolean {
  return message.method === 'tools/call' && declaresTasks(message);
}

/** The upstream a task of `server` is sent to: /mcp's, or the endpoint's own (a server's endpoint, a profile's). */
export function taskOwner(call: TaskCall, server: string): Upstream | undefined {
  return call.server === undefined
    ? call.edge.upstreams.get(server)
    : (call.edge.endpointOf(server) ?? call.endpoint)?.upstream;
}

/** Whether this caller reaches the server on this endpoint. */
export function reachable(call: TaskCall, server: string): boolean {
  if (call.server !== undefined) return server === call.server;
  return call.edge.upstreams.has(server) && (call.grant === undefined || call.grant.reaches(server));
}

/**
 * The spec's answer to a task method, or a listen naming task ids, from a client that did not declare the
 * extension on that request: -32021, naming what to declare.
 */
export function refuseUndeclared(message: JsonRpcRequest): TaskRefusal {
  const refusal = errorResponse(
    message.id,
    ErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: ` +
      `${message.method === 'subscriptions/listen' ? 'task notifications need' : `${message.method} needs`} the ` +
      `${TASKS_EXTENSION} extension declared in params._meta["${META.clientCapabilities}"].extensions`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
  return { allowed: false, rule: `did not declare the ${TASKS_EXTENSION} extension`, refusal };
}

function asUnknown(message: JsonRpcRequest, rule: string): TaskRefusal {
  return { allowed: false, rule, refusal: unknownTask(message.id) };
}

export function isTaskListen(message: JsonRpcRequest): boolean {
  const notifications = message.params?.notifications;
  return isObject(notifications) && Array.isArray(notifications.taskIds) && notifications.taskIds.length > 0;
}
