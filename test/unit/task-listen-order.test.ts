// A task listen's statuses go through TaskCall.shownTaskStatus (guardrails, src/guardrails/task-status.ts)
// before they are written (src/tasks/task-listen.ts): when judging takes a while (a webhook), each is still
// written in the order the server sent them, as judged; one that could not be judged is not written.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import { silentLog } from '../../infra/log.js';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { TaskCall } from '../../src/tasks/task-call.js';
import { TaskIdCodec } from '../../src/tasks/task-ids.js';
import { followTasks } from '../../src/tasks/task-listen.js';

const SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId';

test('slowly judged statuses are written in the order they came; one whose judging failed, never', async () => {
  const tasks = new TaskIdCodec('secret');
  const given = tasks.issue({ server: 'crm', taskId: 's-1', tool: 'lookup' }, 'alice');
  let listening: RequestOptions | undefined;
  const upstream = {
    name: 'crm',
    request: (_message: JsonRpcRequest, options?: RequestOptions) => {
      listening = options;
      return new Promise<JsonRpcResponse>(() => {});
    },
  } as unknown as Upstream;
  const delays: Record<string, number> = { working: 40, input_required: 0, failed: 0, completed: 10 };
  const call = {
    edge: {
      tasks,
      upstreams: new Map([['crm', upstream]]),
      router: undefined,
      log: silentLog,
      endpointOf: () => undefined,
    },
    principal: { id: 'alice' },
    endpoint: undefined,
    name: 'mcp',
    server: undefined,
    security: { guard: undefined },
    grant: undefined,
    callerContext: '',
    caller: { principal: 'alice' },
    span: undefined,
    task: undefined,
    taskTool: undefined,
    shownTaskStatus: async (_server: string, _tool: string | undefined, params: JsonObject) => {
      await sleep(delays[params.status as string]!);
      if (params.status === 'failed') throw new Error('a bug in judging');
      return { ...params, statusMessage: `judged ${String(params.status)}` };
    },
  } satisfies TaskCall;
  const message: JsonRpcRequest = {
    jsonrpc: '2.0',
    id: 9,
    method: 'subscriptions/listen',
    params: { notifications: { taskIds: [given] } },
  };
  const written: string[] = [];
  const outgoing = Object.assign(new EventEmitter(), {
    destroyed: false,
    write: (chunk: string) => written.push(chunk),
  }) as unknown as ServerResponse;
  followTasks(call, message)!.start(outgoing);
  for (const status of ['working', 'input_required', 'failed', 'completed'])
    listening!.onNotification!({ jsonrpc: '2.0', method: 'notifications/tasks', params: { taskId: 's-1', status } });
  await sleep(200);
  const shown = written.map((chunk) => JSON.parse(chunk.replace(/^event: message\ndata: /, '')).params);
  assert.deepEqual(
    shown.map((params) => [params.status, params.statusMessage, params.taskId, params._meta[SUBSCRIPTION]]),
    [
      ['working', 'judged working', given, 9],
      ['input_required', 'judged input_required', given, 9],
      ['completed', 'judged completed', given, 9],
    ],
  );
});
