// The Tasks extension through the gateway's own task ids (src/tasks/), against the tasks server written from
// the extension's spec (test/fixtures/tasks-server.mjs): on /mcp, a profile and /servers/<name>/mcp a task
// is created, polled to its result, moved on through tasks/update and cancelled, by raw HTTP and by the
// ext-tasks client (pinned); another principal's id, or a forged or altered one, answers exactly as an
// unknown task; a task's methods are judged by the tool that created it; status notifications reach the
// owner's listen stream with the gateway's ids; a task created through one replica is polled through another.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  JsonRpcResponseError,
  resultFromTaskOutcome,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import {
  eventually,
  headersFor,
  post,
  request,
  ROOT,
  sseMessages,
  startTestGateway,
  until,
  VERSION,
  type Answer,
} from './harness.js';
import { twoReplicas } from './replicas.js';
import { tempDir } from '../temp.js';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp-receiver.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const DECLARED = { extensions: { [TASKS]: {} } };
const KEYS = { alice: 'alice-tasks-key-0123456789', bob: 'bob-tasks-key-0123456789' } as const;
type Who = keyof typeof KEYS;
const UNKNOWN_TASK = {
  code: -32602,
  message:
    'Failed to retrieve task: Task not found. A task id is good only for the caller it was returned to, through ' +
    'this gateway (or a replica sharing its mrtr.secret), while its creating tool is still allowed; call the tool ' +
    'again for a new task',
};

const tmp = tempDir('mcp-gw-tasks-');
after(() => rmSync(tmp, { recursive: true, force: true }));
const auditFile = path.join(tmp, 'audit.jsonl');

const tasksServer = (env: Record<string, string>) => ({
  command: process.execPath,
  args: ['test/fixtures/tasks-server.mjs'],
  cwd: ROOT,
  env,
});
const servers = {
  t: tasksServer({ SERVER_ID: 't', TASK_MS: '150' }),
  r: tasksServer({ SERVER_ID: 'r', MISBEHAVE: '1' }),
};

/** Alice and Bob may use every tool of both servers, unless `aliceTools` says otherwise. */
function rest(aliceTools: string[] = ['t__*', 'r__*'], when: unknown[] = []): Record<string, unknown> {
  return {
    auth: {
      anonymous: false,
      apiKeys: [
        { key: KEYS.alice, principal: 'alice' },
        { key: KEYS.bob, principal: 'bob' },
      ],
    },
    policies: [
      {
        name: 'alice',
        principals: { ids: ['alice'] },
        allow: { servers: ['t', 'r'], tools: aliceTools },
        ...(when.length > 0 && { when }),
      },
      { name: 'bob', principals: { ids: ['bob'] }, allow: { servers: ['t', 'r'], tools: ['t__*', 'r__*'] } },
    ],
    profiles: { work: { tools: ['t__*'], rename: { t__slow: 'long_job' } } },
    audit: { destination: auditFile },
  };
}

/** One request as `who`, with the headers a conforming client sends (Mcp-Name: the task id for a task method). */
async function send(
  url: string,
  who: Who | undefined,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = DECLARED,
): Promise<Answer> {
  const body = request(method, { ...params, _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities } });
  const headers: Record<string, string> = { ...headersFor(body) };
  if (method.startsWith('tasks/')) headers['mcp-name'] = String(params.taskId);
  if (who) headers.authorization = `Bearer ${KEYS[who]}`;
  return post(url, body, headers);
}

async function create(
  url: string,
  who: Who | undefined,
  name: string,
  args: Record<string, unknown> = {},
): Promise<string> {
  const created = await send(url, who, 'tools/call', { name, arguments: args });
  assert.equal(created.body.result?.resultType, 'task', JSON.stringify(created.body));
  return created.body.result.taskId;
}

async function pollUntil(url: string, who: Who | undefined, taskId: string, status: string): Promise<any> {
  let last: any;
  const reached = await until(
    async () => {
      last = (await send(url, who, 'tasks/get', { taskId })).body;
      return last.result?.status === status;
    },
    5_000,
    30,
  );
  assert.ok(reached, `task never reached ${status}: ${JSON.stringify(last)}`);
  assert.equal(last.result.taskId, taskId, 'the answer carries the id the caller gave');
  return last.result;
}

/** A listen stream as `who`, declaring the extension, naming these task ids. */
async function listen(url: string, who: Who | undefined, taskIds: string[]) {
  const body = request('subscriptions/listen', {
    notifications: { taskIds },
    _meta: { 'io.modelcontextprotocol/clientCapabilities': DECLARED },
  });
  const controller = new AbortController();
  const headers: Record<string, string> = { ...headersFor(body), ...(who && { authorization: `Bearer ${KEYS[who]}` }) };
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal });
  if (response.headers.get('content-type') !== 'text/event-stream')
    assert.fail(`listen answered ${response.status}: ${await response.text()}`);
  const { messages, done } = sseMessages(response);
  done.catch(() => {});
  await eventually(() => messages.length > 0, 5_000);
  return { id: body.id, messages, close: () => controller.abort() };
}

/** An ext-tasks session over the SDK v2 client; task methods go by plain HTTP (the client's raw dispatch). */
async function extTasksSession(url: string, who: Who): Promise<{ session: TaskEnabledSession; client: Client }> {
  const authorization = `Bearer ${KEYS[who]}`;
  const clientInfo = { name: 'ext-tasks-e2e', version: '1.0.0' };
  const client = new Client(clientInfo, {
    versionNegotiation: { mode: { pin: VERSION } },
    capabilities: { extensions: { [TASKS]: {} } },
  } as never);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization } } }),
  );
  let nextId = 1;
  const rawDispatch = async (message: any) => {
    const body = { ...message, jsonrpc: '2.0', id: message.id ?? `ext-${nextId++}` };
    const headers: Record<string, string> = { ...headersFor(body), authorization };
    if (typeof body.params?.taskId === 'string') headers['mcp-name'] = body.params.taskId;
    const answer = await post(url, body, headers);
    return 'error' in answer.body
      ? { kind: 'error' as const, error: answer.body.error }
      : { kind: 'result' as const, result: answer.body.result };
  };
  const session = createTaskSessionFromClient(client, {
    endpointId: `${url}#${who}`,
    rawDispatch,
    v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities: { extensions: { [TASKS]: {} } } },
    onInputRequest: (async (input: any) =>
      input.kind === 'elicitation' ? { action: 'accept', content: { name: 'Ada' } } : undefined) as never,
  });
  return { session, client };
}

function auditLines(): any[] {
  return existsSync(auditFile)
    ? readFileSync(auditFile, 'utf8')
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line))
    : [];
}

describe('tasks through the gateway’s own ids', () => {
  let gateway: RunningGateway;
  let mcp: string;
  let onT: string;
  let work: string;
  before(async () => {
    gateway = await startTestGateway(servers, {}, rest());
    mcp = `${gateway.url}/mcp`;
    onT = `${gateway.url}/servers/t/mcp`;
    work = `${gateway.url}/profiles/work/mcp`;
  });
  after(() => gateway?.close());

  test('on /mcp a task is created under the gateway’s id and polled to its result', async () => {
    const taskId = await create(mcp, 'alice', 't__slow', { text: 'report' });
    assert.match(taskId, /^gwtask1\./);
    const done = await pollUntil(mcp, 'alice', taskId, 'completed');
    assert.equal(done.result.content[0].text, 't done: report');
  });

  test('on /mcp a task that needs input moves on through tasks/update', async () => {
    const taskId = await create(mcp, 'alice', 't__ask');
    const waiting = await pollUntil(mcp, 'alice', taskId, 'input_required');
    const [key] = Object.keys(waiting.inputRequests);
    const ack = await send(mcp, 'alice', 'tasks/update', {
      taskId,
      inputResponses: { [key!]: { action: 'accept', content: { name: 'Ada' } } },
    });
    assert.equal(ack.body.result?.resultType, 'complete', JSON.stringify(ack.body));
    const done = await pollUntil(mcp, 'alice', taskId, 'completed');
    assert.equal(done.result.content[0].text, 'Hello, Ada!');
  });

  test('on /mcp a task is cancelled', async () => {
    const taskId = await create(mcp, 'alice', 't__slow', { ms: 30_000 });
    const ack = await send(mcp, 'alice', 'tasks/cancel', { taskId });
    assert.equal(ack.body.result?.resultType, 'complete', JSON.stringify(ack.body));
    await pollUntil(mcp, 'alice', taskId, 'cancelled');
  });

  test('on a profile a task of a tool it shows is served; one of a tool it hides is unknown there', async () => {
    const taskId = await create(work, 'alice', 'long_job', { text: 'profiled' });
    const done = await pollUntil(work, 'alice', taskId, 'completed');
    assert.equal(done.result.content[0].text, 't done: profiled');
    const hidden = await create(mcp, 'alice', 'r__slow', { ms: 30_000 });
    const answer = await send(work, 'alice', 'tasks/get', { taskId: hidden });
    assert.deepEqual(answer.body.error, UNKNOWN_TASK);
    await send(mcp, 'alice', 'tasks/cancel', { taskId: hidden });
  });

  test('in search mode call_tool may answer a task, polled on /search/mcp', async () => {
    const search = `${gateway.url}/search/mcp`;
    const taskId = await create(search, 'alice', 'call_tool', { name: 't__slow', arguments: { text: 'searched' } });
    const done = await pollUntil(search, 'alice', taskId, 'completed');
    assert.equal(done.result.content[0].text, 't done: searched');
  });

  test(
    'another principal’s id, a forged or altered one answers exactly as an unknown task, on /mcp and on ' +
      '/servers/t/mcp',
    async () => {
      const viaMcp = await create(mcp, 'alice', 't__slow', { ms: 30_000 });
      const viaServer = await create(onT, 'alice', 'slow', { ms: 30_000 });
      const dot = viaMcp.lastIndexOf('.');
      const last = viaMcp.at(-1) === 'A' ? 'B' : 'A';
      const forged = [
        'gwtask1.W10.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        `${viaMcp.slice(0, -1)}${last}`,
        `${viaMcp.slice(0, dot)}x${viaMcp.slice(dot)}`,
        't-nosuch',
      ];
      const answers: Answer[] = [];
      for (const url of [mcp, onT]) {
        for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
          const params = method === 'tasks/update' ? { inputResponses: {} } : {};
          for (const taskId of [viaMcp, viaServer]) answers.push(await send(url, 'bob', method, { taskId, ...params }));
          for (const taskId of forged) answers.push(await send(url, 'alice', method, { taskId, ...params }));
        }
      }
      for (const answer of answers) {
        assert.equal(answer.status, answers[0]!.status);
        assert.deepEqual(answer.body.error, UNKNOWN_TASK, JSON.stringify(answer.body));
      }
      // Bob's cancel did not reach the task: Alice's is still working, on either endpoint.
      assert.equal((await send(mcp, 'alice', 'tasks/get', { taskId: viaMcp })).body.result.status, 'working');
      assert.equal((await send(onT, 'alice', 'tasks/get', { taskId: viaServer })).body.result.status, 'working');
      // An id names its server: one of t's tasks is unknown on r's endpoint.
      assert.deepEqual(
        (await send(`${gateway.url}/servers/r/mcp`, 'alice', 'tasks/get', { taskId: viaServer })).body.error,
        UNKNOWN_TASK,
      );
      await send(mcp, 'alice', 'tasks/cancel', { taskId: viaMcp });
      await send(onT, 'alice', 'tasks/cancel', { taskId: viaServer });
    },
  );

  test(
    'a task’s methods are judged by the tool that created it: one the caller may no longer use is unknown; its ' +
      'call’s conditions are not asked again',
    async () => {
      const asked = await create(mcp, 'alice', 't__ask');
      const slow = await create(mcp, 'alice', 't__slow', { ms: 30_000 });
      // t__slow stays allowed, under a condition on its arguments: a task method has none, and is not judged by it.
      const when = [{ tool: 't__slow', expr: 'has(args.ms) && args.ms > 1000' }];
      await gateway.reload(
        parseConfig({ listen: { port: 0 }, servers, ...rest(['t__slow', 'r__*'], when) }, 'test', ROOT),
      );
      try {
        assert.deepEqual((await send(mcp, 'alice', 'tasks/get', { taskId: asked })).body.error, UNKNOWN_TASK);
        assert.deepEqual((await send(mcp, 'alice', 'tasks/cancel', { taskId: asked })).body.error, UNKNOWN_TASK);
        assert.equal((await send(mcp, 'alice', 'tasks/get', { taskId: slow })).body.result?.status, 'working');
        await gateway.security.current.audit!.flush();
        let lines: any[] = [];
        await eventually(async () => {
          await gateway.security.current.audit!.flush();
          lines = auditLines().filter((l) => l.method === 'tasks/get' && l.principal === 'alice');
          return (
            lines.some((l) => l.target === 't__ask' && l.decision === 'deny') &&
            lines.some((l) => l.target === 't__slow' && l.decision === 'allow')
          );
        }, 3_000);
      } finally {
        await send(mcp, 'alice', 'tasks/cancel', { taskId: slow });
        await gateway.reload(parseConfig({ listen: { port: 0 }, servers, ...rest() }, 'test', ROOT));
      }
    },
  );

  test(
    'a client that did not declare the extension never receives a task on /mcp, even from a server that ' +
      'answers one',
    async () => {
      const answer = await send(mcp, 'alice', 'tools/call', { name: 'r__slow', arguments: {} }, {});
      assert.equal(answer.body.result, undefined, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, -32603);
      assert.match(answer.body.error.message, new RegExp(`did not declare the ${TASKS} extension`));
    },
  );

  test(
    'a task method or a task listen from a client that did not declare the extension is -32021, ' + 'naming it',
    async () => {
      const taskId = await create(mcp, 'alice', 't__slow', { ms: 30_000 });
      const missing = { code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } };
      for (const url of [mcp, onT]) {
        const get = await send(url, 'alice', 'tasks/get', { taskId }, {});
        assert.deepEqual({ code: get.body.error?.code, data: get.body.error?.data }, missing, JSON.stringify(get.body));
        assert.match(get.body.error.message, new RegExp(`tasks/get needs the ${TASKS} extension declared`));
        const body = request('subscriptions/listen', { notifications: { taskIds: [taskId] } });
        const listened = await post(url, body, { ...headersFor(body), authorization: `Bearer ${KEYS.alice}` });
        assert.deepEqual(
          { code: listened.body.error?.code, data: listened.body.error?.data },
          missing,
          JSON.stringify(listened.body),
        );
      }
      await send(mcp, 'alice', 'tasks/cancel', { taskId });
    },
  );

  for (const where of ['', '/servers/t'] as const) {
    test(`status notifications reach the owner’s listen stream on ${where}/mcp with the gateway’s ids`, async () => {
      const url = where === '' ? mcp : onT;
      const taskId = await create(url, 'alice', where === '' ? 't__ask' : 'ask');
      const bobs = await listen(url, 'bob', [taskId]);
      assert.deepEqual(
        bobs.messages[0].params.notifications,
        { taskIds: [] },
        'Bob’s listen honours none of Alice’s tasks',
      );
      bobs.close();
      const stream = await listen(url, 'alice', [taskId, 'gwtask1.forged.AAAA']);
      try {
        assert.equal(stream.messages[0].method, 'notifications/subscriptions/acknowledged');
        assert.deepEqual(stream.messages[0].params.notifications, { taskIds: [taskId] });
        const told = (status: string) =>
          stream.messages.find((m) => m.method === 'notifications/tasks' && m.params.status === status);
        const waiting = await pollUntil(url, 'alice', taskId, 'input_required');
        // The server tells a new listener each task's state: then the gateway's own listen is in place.
        await eventually(() => told('input_required') !== undefined, 5_000);
        const [key] = Object.keys(waiting.inputRequests);
        await send(url, 'alice', 'tasks/update', {
          taskId,
          inputResponses: { [key!]: { action: 'accept', content: { name: 'Ada' } } },
        });
        await eventually(() => told('completed') !== undefined, 5_000);
        const done = told('completed');
        assert.equal(done.params.taskId, taskId);
        assert.equal(done.params.result.content[0].text, 'Hello, Ada!');
        assert.equal(done.params._meta['io.modelcontextprotocol/subscriptionId'], stream.id);
        assert.ok(
          stream.messages.every((m) => m.method !== 'notifications/tasks' || m.params.taskId === taskId),
          'only the gateway’s id is ever shown',
        );
      } finally {
        stream.close();
      }
    });
  }

  for (const where of ['', '/servers/t'] as const) {
    test(
      `the ext-tasks client through ${where}/mcp: created, polled to its result, moved on by tasks/update, ` +
        `cancelled; another principal refused`,
      async () => {
        const url = where === '' ? mcp : onT;
        const name = (tool: string) => (where === '' ? `t__${tool}` : tool);
        const alice = await extTasksSession(url, 'alice');
        const bob = await extTasksSession(url, 'bob');
        try {
          const slow = await alice.session.callTool(name('slow'), { text: 'ext' });
          assert.equal(slow.kind, 'task');
          const settled = await slow.settle();
          assert.equal((resultFromTaskOutcome(settled.outcome) as any).content[0].text, 't done: ext');

          const asked = await alice.session.callTool(name('ask'), {});
          const answered = await asked.settle();
          assert.equal((resultFromTaskOutcome(answered.outcome) as any).content[0].text, 'Hello, Ada!');

          const long = await alice.session.callTool(name('slow'), { ms: 30_000 });
          assert.equal(long.kind, 'task');
          const taskId = long.handle!.taskId;
          await assert.rejects(
            bob.session.task(taskId).snapshot(),
            (error: unknown) => error instanceof JsonRpcResponseError && error.code === -32602,
          );
          assert.equal((await alice.session.task(taskId).snapshot()).status, 'working');
          await long.cancel();
          await eventually(async () => (await alice.session.task(taskId).snapshot()).status === 'cancelled', 5_000);
        } finally {
          await alice.session.close();
          await bob.session.close();
          await alice.client.close();
          await bob.client.close();
        }
      },
    );
  }
});

describe('tasks across replicas', () => {
  // One tasks server that both replicas reach over HTTP (through a third gateway), as replicas of a
  // deployment share their remote servers.
  let origin: RunningGateway;
  before(async () => {
    origin = await startTestGateway({ t: tasksServer({ SERVER_ID: 't', TASK_MS: '150' }) });
  });
  after(() => origin?.close());
  const replicas = twoReplicas('tasks-replicas', (shared) =>
    startTestGateway({ t: { url: `${origin.url}/servers/t/mcp` } }, {}, shared),
  );

  test('a task created through one replica is polled, updated and cancelled through the other', async () => {
    const [a, b] = [`${replicas.a.url}/mcp`, `${replicas.b.url}/mcp`];
    const taskId = await create(a, undefined, 't__slow', { text: 'replicated' });
    const done = await pollUntil(b, undefined, taskId, 'completed');
    assert.equal(done.result.content[0].text, 't done: replicated');
    const asked = await create(b, undefined, 't__ask');
    const waiting = await pollUntil(a, undefined, asked, 'input_required');
    const [key] = Object.keys(waiting.inputRequests);
    await send(b, undefined, 'tasks/update', {
      taskId: asked,
      inputResponses: { [key!]: { action: 'accept', content: { name: 'Ada' } } },
    });
    assert.equal((await pollUntil(a, undefined, asked, 'completed')).result.content[0].text, 'Hello, Ada!');
    const long = await create(a, undefined, 't__slow', { ms: 30_000 });
    await send(b, undefined, 'tasks/cancel', { taskId: long });
    await pollUntil(a, undefined, long, 'cancelled');
  });

  test('a listen on the other replica hears the task’s status, through the HTTP upstream', async () => {
    const taskId = await create(`${replicas.a.url}/mcp`, undefined, 't__ask');
    await pollUntil(`${replicas.a.url}/mcp`, undefined, taskId, 'input_required');
    const stream = await listen(`${replicas.b.url}/mcp`, undefined, [taskId]);
    try {
      assert.deepEqual(stream.messages[0].params.notifications, { taskIds: [taskId] });
      const told = (status: string) =>
        stream.messages.find((m) => m.method === 'notifications/tasks' && m.params.status === status);
      await eventually(() => told('input_required') !== undefined, 5_000);
      const [key] = Object.keys(told('input_required').params.inputRequests);
      await send(`${replicas.a.url}/mcp`, undefined, 'tasks/update', {
        taskId,
        inputResponses: { [key!]: { action: 'accept', content: { name: 'Ada' } } },
      });
      await eventually(
        () => stream.messages.some((m) => m.method === 'notifications/tasks' && m.params.status === 'completed'),
        5_000,
      );
      const done = stream.messages.find((m) => m.method === 'notifications/tasks' && m.params.status === 'completed');
      assert.equal(done.params.taskId, taskId);
      assert.equal(done.params.result.content[0].text, 'Hello, Ada!');
    } finally {
      stream.close();
    }
  });
});

describe('a task traced', () => {
  const SERVER = 2;
  const CLIENT = 3;
  let receiver: OtlpReceiver;
  let gateway: RunningGateway;
  before(async () => {
    receiver = await startOtlpReceiver();
    gateway = await startTestGateway(
      { t: servers.t },
      {},
      { telemetry: { traces: { endpoint: receiver.url, protocol: 'http/json', sampler: 'always_on' } } },
    );
  });
  after(async () => {
    await gateway?.close();
    await receiver?.close();
  });

  test(
    'a task method is traced like a call: a server span naming the creating tool, a client span to the owning ' +
      'server',
    async () => {
      const mcp = `${gateway.url}/mcp`;
      const taskId = await create(mcp, undefined, 't__slow', { ms: 30_000 });
      const trace = '4a5b'.repeat(8);
      const body = request('tasks/get', { taskId, _meta: { 'io.modelcontextprotocol/clientCapabilities': DECLARED } });
      const answer = await post(mcp, body, {
        ...headersFor(body),
        'mcp-name': taskId,
        traceparent: `00-${trace}-${'9c8d'.repeat(4)}-01`,
      });
      assert.equal(answer.body.result?.status, 'working', JSON.stringify(answer.body));
      await eventually(() => receiver.spans.filter((s) => s.traceId === trace).length >= 2, 10_000);
      const spans = receiver.spans.filter((s) => s.traceId === trace);
      const server = spans.find((s) => s.kind === SERVER)!;
      const client = spans.find((s) => s.kind === CLIENT)!;
      assert.equal(server.attributes['mcp.method.name'], 'tasks/get');
      assert.equal(server.attributes['gen_ai.tool.name'], 't__slow');
      assert.equal(client.parentSpanId, server.spanId);
      await send(mcp, undefined, 'tasks/cancel', { taskId });
    },
  );
});

describe('tasks on a pool of children', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway({
      t: { ...tasksServer({ SERVER_ID: 't', TASK_MS: '100' }), instances: 3, era: 'modern' },
    });
  });
  after(() => gateway?.close());

  test('each task’s methods go to the child that holds it', async () => {
    const mcp = `${gateway.url}/mcp`;
    // Created at once, so the least busy child differs: each is held by its own child.
    const ids = await Promise.all(['one', 'two', 'three'].map((text) => create(mcp, undefined, 't__slow', { text })));
    // Every poll finds its task, whichever child would be least busy at the time (the pool takes turns
    // among idle children, so polling one task twice in a row asks two children without affinity).
    for (const taskId of ids) {
      for (let poll = 0; poll < 2; poll++) {
        const answer = await send(mcp, undefined, 'tasks/get', { taskId });
        assert.equal(answer.body.result?.taskId, taskId, JSON.stringify(answer.body));
      }
    }
    const done = await Promise.all(ids.map((taskId) => pollUntil(mcp, undefined, taskId, 'completed')));
    assert.deepEqual(
      done.map((task) => task.result.content[0].text),
      ['t done: one', 't done: two', 't done: three'],
    );
  });
});
