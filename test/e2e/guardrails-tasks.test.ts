// Guardrails on the Tasks extension (issue 48), against test/fixtures/tasks-server.mjs: a task's result is
// judged by the results rules of the tool that created it, when polled (tasks/get) and when pushed on a listen
// stream (notifications/tasks: redacted, or shown as failed with the refusal when a rule blocks); the caller's
// answers to a task's questions (tasks/update inputResponses) pass the arguments rules, and blocked ones never
// reach the server.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { tempDir } from '../temp.js';
import { eventually, headersFor, openListen, post, request, ROOT, until } from './harness.js';
import { startReadyGateway } from './ready-gateway.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const META = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };
// Fake credentials, assembled so that no scanner flags this file itself.
const AWS_KEY = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');
const CARD = '4111 1111 1111 1111';

const tmp = tempDir('mcp-gw-guardrails-tasks-');
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('guardrails on tasks', () => {
  let gateway: RunningGateway;
  const record = path.join(tmp, 'received.jsonl');
  const auditFile = path.join(tmp, 'audit.jsonl');

  const send = (url: string, method: string, params: Record<string, unknown>) => {
    const body = request(method, { ...params, _meta: META });
    const headers: Record<string, string> = { ...headersFor(body) };
    if (method.startsWith('tasks/')) headers['mcp-name'] = String(params.taskId);
    return post(url, body, headers);
  };
  const create = async (url: string, name: string, args: Record<string, unknown> = {}): Promise<string> => {
    const created = await send(url, 'tools/call', { name, arguments: args });
    assert.equal(created.body.result?.resultType, 'task', JSON.stringify(created.body));
    return created.body.result.taskId;
  };
  const pollUntil = async (url: string, taskId: string, done: (body: any) => boolean): Promise<any> => {
    let last: any;
    const reached = await until(async () => {
      last = (await send(url, 'tasks/get', { taskId })).body;
      return done(last);
    }, 5_000);
    assert.ok(reached, JSON.stringify(last));
    return last;
  };
  const listen = (url: string, taskIds: string[]) => openListen(url, { taskIds }, {}, META);

  before(async () => {
    gateway = await startReadyGateway(
      {
        t: {
          command: process.execPath,
          args: ['test/fixtures/tasks-server.mjs'],
          cwd: ROOT,
          env: { SERVER_ID: 't', RECORD_FILE: record },
        },
      },
      {},
      {
        auth: { anonymous: true },
        audit: { destination: auditFile },
        guardrails: [
          { name: 'cards-out', on: ['results'], tools: ['t__slow'], detect: ['creditCard'], action: 'redact' },
          { name: 'keys-out', on: ['results'], tools: ['t__slow'], detect: ['secrets'], action: 'block' },
          { name: 'keys-in', on: ['arguments'], tools: ['t__ask'], detect: ['secrets'], action: 'block' },
          { name: 'cards-in', on: ['arguments'], tools: ['t__ask'], detect: ['creditCard'], action: 'redact' },
        ],
      },
    );
  });
  after(() => gateway?.close());

  test("a task's result is redacted on the listen stream and in tasks/get", async () => {
    const url = `${gateway.url}/mcp`;
    const taskId = await create(url, 't__slow', { text: `charged ${CARD}`, ms: 300 });
    const stream = await listen(url, [taskId]);
    try {
      const completed = () =>
        stream.messages.find((m) => m.method === 'notifications/tasks' && m.params.status === 'completed');
      await eventually(() => completed() !== undefined, 5_000);
      assert.equal(completed().params.result.content[0].text, 't done: charged [redacted:creditCard]');
      assert.equal(completed().params.taskId, taskId);
      assert.doesNotMatch(JSON.stringify(stream.messages), /4111/);
    } finally {
      stream.close();
    }
    const polled = await pollUntil(url, taskId, (body) => body.result?.status === 'completed');
    assert.equal(polled.result.result.content[0].text, 't done: charged [redacted:creditCard]');
  });

  test('a result a rule blocks: the listen shows the task failed with the refusal; tasks/get is refused', async () => {
    const url = `${gateway.url}/servers/t/mcp`;
    const taskId = await create(url, 'slow', { text: `aws ${AWS_KEY}`, ms: 300 });
    const stream = await listen(url, [taskId]);
    try {
      const failed = () =>
        stream.messages.find((m) => m.method === 'notifications/tasks' && m.params.status === 'failed');
      await eventually(() => failed() !== undefined, 5_000);
      const { params } = failed();
      assert.equal(params.taskId, taskId);
      assert.equal(params.error.code, -32602);
      assert.match(params.error.message, /^Refused by guardrail keys-out: the result held secrets/);
      assert.deepEqual(params.error.data, { guardrail: 'keys-out', stage: 'results', detectors: ['secrets'] });
      assert.equal(typeof params.createdAt, 'string', "the task's own fields are kept");
      assert.ok(!stream.messages.some((m) => m.params?.status === 'completed'), 'the completed status is not shown');
      assert.doesNotMatch(JSON.stringify(stream.messages), new RegExp(AWS_KEY));
    } finally {
      stream.close();
    }
    const polled = await pollUntil(url, taskId, (body) => body.error !== undefined);
    assert.match(polled.error.message, /^Refused by guardrail keys-out/);
    const audit = readFileSync(auditFile, 'utf8');
    assert.match(audit, /"method":"notifications\/tasks".*"rule":"guardrail keys-out"/);
  });

  test("tasks/update: the caller's answers pass the arguments rules; blocked ones never reach the server", async () => {
    const url = `${gateway.url}/mcp`;
    const taskId = await create(url, 't__ask');
    const waiting = await pollUntil(url, taskId, (body) => body.result?.status === 'input_required');
    const [key] = Object.keys(waiting.result.inputRequests);
    const answer = (name: string) =>
      send(url, 'tasks/update', { taskId, inputResponses: { [key!]: { action: 'accept', content: { name } } } });
    const refused = await answer(`my key is ${AWS_KEY}`);
    assert.equal(refused.body.error?.code, -32602, JSON.stringify(refused.body));
    assert.match(refused.body.error.message, /^Refused by guardrail keys-in: the input responses held secrets/);
    const accepted = await answer(`card ${CARD}`);
    assert.equal(accepted.body.result?.resultType, 'complete', JSON.stringify(accepted.body));
    const done = await pollUntil(url, taskId, (body) => body.result?.status === 'completed');
    assert.equal(done.result.result.content[0].text, 'Hello, card [redacted:creditCard]!');
    const updates = (existsSync(record) ? readFileSync(record, 'utf8') : '')
      .split('\n')
      .filter((line) => line.includes('"tasks/update"'));
    assert.equal(updates.length, 1, 'the refused update never reached the server');
    assert.match(updates[0]!, /card \[redacted:creditCard\]/);
    assert.doesNotMatch(updates[0]!, new RegExp(`${AWS_KEY}|4111`));
  });
});
