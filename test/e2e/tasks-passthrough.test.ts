// The Tasks extension on /servers/<name>/mcp, against a tasks server written from the extension's spec
// (test/fixtures/tasks-server.mjs): a tools/call answered with a task passes through; tasks/get polls it to
// its result, tasks/update answers its input requests, tasks/cancel ends it; a client that did not declare
// the extension never receives a task, even from a server that answers one anyway.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningGateway } from '../../src/gateway.js';
import { headersFor, post, request, ROOT, startTestGateway, until, send } from './harness.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const DECLARED = { extensions: { [TASKS]: {} } };
let gateway: RunningGateway;

before(async () => {
  const tasksServer = (env: Record<string, string>) => ({
    command: process.execPath,
    args: ['test/fixtures/tasks-server.mjs'],
    cwd: ROOT,
    env,
  });
  gateway = await startTestGateway({
    tasks: tasksServer({ SERVER_ID: 't', TASK_MS: '150' }),
    rogue: tasksServer({ SERVER_ID: 'r', MISBEHAVE: '1' }),
  });
});

after(() => gateway?.close());

const at = (server: string) => `${gateway.url}/servers/${server}/mcp`;

async function callTool(
  server: string,
  name: string,
  args: Record<string, unknown>,
  capabilities: Record<string, unknown>,
) {
  const body = request('tools/call', {
    name,
    arguments: args,
    _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities },
  });
  return (await post(at(server), body, headersFor(body))).body;
}

async function taskMethod(method: string, params: Record<string, unknown>) {
  const body = request(method, { ...params, _meta: { 'io.modelcontextprotocol/clientCapabilities': DECLARED } });
  return (await send(at('tasks'), body, { 'mcp-name': String(params.taskId) })).body;
}

async function pollUntil(taskId: string, status: string): Promise<any> {
  let last: any;
  const reached = await until(
    async () => {
      last = (await taskMethod('tasks/get', { taskId })).result;
      return last?.status === status;
    },
    5_000,
    30,
  );
  assert.ok(reached, `task never reached ${status}: ${JSON.stringify(last)}`);
  return last;
}

describe('tasks through /servers/<name>/mcp', () => {
  test('a task is created, polled to its result', async () => {
    const created = await callTool('tasks', 'slow', { text: 'report' }, DECLARED);
    assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
    assert.equal(created.result.status, 'working');
    const done = await pollUntil(created.result.taskId, 'completed');
    assert.equal(done.resultType, 'complete');
    assert.equal(done.result.content[0].text, 't done: report');
  });

  test('a task that needs input moves on through tasks/update', async () => {
    const created = await callTool('tasks', 'ask', {}, DECLARED);
    const taskId = created.result.taskId;
    const waiting = await pollUntil(taskId, 'input_required');
    const [key, question] = Object.entries(waiting.inputRequests as Record<string, any>)[0]!;
    assert.equal(question.method, 'elicitation/create');
    const ack = await taskMethod('tasks/update', {
      taskId,
      inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } },
    });
    assert.equal(ack.result?.resultType, 'complete', JSON.stringify(ack));
    const done = await pollUntil(taskId, 'completed');
    assert.equal(done.result.content[0].text, 'Hello, Ada!');
  });

  test('a task is cancelled', async () => {
    const created = await callTool('tasks', 'slow', { text: 'never', ms: 30_000 }, DECLARED);
    const ack = await taskMethod('tasks/cancel', { taskId: created.result.taskId });
    assert.equal(ack.result?.resultType, 'complete', JSON.stringify(ack));
    await pollUntil(created.result.taskId, 'cancelled');
  });

  test('a client that did not declare the extension gets the server’s plain answer', async () => {
    const answer = await callTool('tasks', 'slow', { text: 'now' }, {});
    assert.equal(answer.result?.resultType, 'complete');
    assert.equal(answer.result.content[0].text, 't done at once: now');
  });

  test('a server that answers a task anyway: the undeclared client gets an error, never the task', async () => {
    const answer = await callTool('rogue', 'slow', { text: 'x' }, {});
    assert.equal(answer.result, undefined, JSON.stringify(answer));
    assert.equal(answer.error.code, -32603);
    assert.match(answer.error.message, new RegExp(`did not declare the ${TASKS} extension`));
    const declared = await callTool('rogue', 'slow', { text: 'x' }, DECLARED);
    assert.equal(declared.result?.resultType, 'task');
  });
});
