// Task status notifications (notifications/tasks) for a subscriptions/listen that names task ids. Each id
// is opened as a task method's would be (task-step.ts): only the caller's own tasks, of servers it reaches,
// created by tools it may still use, are honoured; the acknowledgement lists those. For each owning server
// the gateway opens a listen of its own, naming the server's ids, for as long as the caller's stream stays
// open; what the server tells of those tasks goes to the caller with the gateway's ids and the caller's
// subscription id, as the caller's guardrails show it (TaskCall.shownTaskStatus: a task's result is content).
// Held only while the caller's stream is open, on the replica that holds that stream.
import { withoutCapabilityLinks } from '../../protocol/capability-links.js';
import type { ServerResponse } from 'node:http';
import { isObject, type JsonObject, type JsonRpcNotification, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { META } from '../../protocol/mcp.js';
import type { TaskCall } from './task-call.js';
import { reachable, taskDecision, taskOwner } from './task-step.js';

/** The tasks a listen follows: the ids to acknowledge, and what starts following them once the stream is open. */
export interface FollowedTasks {
  taskIds: string[];
  start(outgoing: ServerResponse): void;
}

/** Undefined when the listen names no task ids. */
export function followTasks(call: TaskCall, message: JsonRpcRequest): FollowedTasks | undefined {
  const notifications = message.params?.notifications;
  const asked = isObject(notifications) && Array.isArray(notifications.taskIds) ? notifications.taskIds : undefined;
  if (asked === undefined) return undefined;
  /** By owning server: the server's own id → the gateway's, and the /mcp name of the tool that created it. */
  const byServer = new Map<string, Map<string, Followed>>();
  const taskIds: string[] = [];
  for (const given of new Set(asked)) {
    const ref = call.edge.tasks.open(given, call.principal.id);
    if (ref === undefined || !reachable(call, ref.server)) continue;
    const decision = taskDecision(call, ref);
    if (!decision.allowed) continue;
    let ids = byServer.get(ref.server);
    if (ids === undefined) byServer.set(ref.server, (ids = new Map()));
    ids.set(ref.taskId, { given: given as string, tool: decision.target });
    taskIds.push(given as string);
  }
  return {
    taskIds,
    start: (outgoing) => {
      for (const [server, ids] of byServer) listenTo(call, message, server, ids, outgoing);
    },
  };
}

/** A task a listen follows: the gateway's id for it, and the /mcp name of the tool that created it. */
interface Followed {
  given: string;
  tool: string | undefined;
}

function listenTo(
  call: TaskCall,
  message: JsonRpcRequest,
  server: string,
  ids: Map<string, Followed>,
  outgoing: ServerResponse,
): void {
  const upstream = taskOwner(call, server);
  if (upstream === undefined) return;
  const closed = new AbortController();
  outgoing.once('close', () => closed.abort());
  const subscription = message.id;
  const request: JsonRpcRequest = {
    jsonrpc: '2.0',
    id: `tasks-${String(subscription)}`,
    method: 'subscriptions/listen',
    // The caller's own _meta: it declared the extension, which the server requires of a task listen.
    params: { notifications: { taskIds: [...ids.keys()] }, _meta: { ...(message.params?._meta as JsonObject) } },
  };
  const write = (params: JsonObject, taskId: string): void => {
    if (outgoing.destroyed) return;
    const meta = isObject(params._meta) ? params._meta : {};
    const shown = {
      jsonrpc: '2.0',
      method: 'notifications/tasks',
      params: { ...params, taskId, _meta: { ...meta, [META.subscriptionId]: subscription } },
    };
    outgoing.write(`event: message\ndata: ${JSON.stringify(shown)}\n\n`);
  };
  // Statuses judged by guardrails (a webhook may take a while) are written in the order they came.
  let judging: Promise<void> | undefined;
  const onNotification = (notification: JsonRpcNotification): void => {
    const params = notification.params;
    if (notification.method !== 'notifications/tasks' || !isObject(params) || typeof params.taskId !== 'string') return;
    const followed = ids.get(params.taskId);
    if (followed === undefined || outgoing.destroyed) return;
    const shown = call.shownTaskStatus(server, followed.tool, params);
    if (!(shown instanceof Promise) && judging === undefined) return write(shown, followed.given);
    // Its failure is handled in its turn below; until then it must not count as an unhandled rejection.
    if (shown instanceof Promise) shown.catch(() => {});
    judging = (judging ?? Promise.resolve())
      .then(() => shown)
      .then(
        (judged) => write(judged, followed.given),
        // Never the content unjudged: a status that could not be judged is not written (the caller may poll).
        (error: unknown) => call.edge.log.warn({ server, err: error }, 'a task status could not be judged'),
      );
  };
  void upstream
    .request(request, {
      signal: closed.signal,
      onNotification,
      authContext: call.callerContext,
      caller: call.caller,
      reach: call.grant,
    })
    .then(
      (answer) => {
        if (!closed.signal.aborted)
          call.edge.log.info(
            { server, answer: 'error' in answer ? withoutCapabilityLinks(answer.error.message) : 'ended' },
            'a server ended the task listen of a caller',
          );
      },
      (error: unknown) => call.edge.log.warn({ server, err: error }, 'a task listen to a server failed'),
    );
}
