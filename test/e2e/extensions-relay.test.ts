// Methods the gateway has no rule for, and extensions: on /servers/<name>/mcp an unknown method reaches the
// server (which answers it, -32601 included); a method the core removed reaches it only when the server
// advertises the extension that took the name up (tasks/get: io.modelcontextprotocol/tasks); on /mcp an
// unknown method is -32601 saying where a server's own methods are reached. server/discover keeps the
// server's capabilities.extensions, and /mcp's and a profile's merged discover list an extension any
// server offers, saying which.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunningGateway } from '../../src/gateway.js';
import { eventually, post, request, ROOT, startTestGateway, send, recordingServer } from './harness.js';
import { tempDir } from '../temp.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const dir = tempDir('ext-relay-');
const plainFile = path.join(dir, 'plain.log');
const tasksFile = path.join(dir, 'tasks.log');
let gateway: RunningGateway;

/** Every request the server received, as parsed lines. */
function received(file: string): any[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}
const methodsAt = (file: string) => received(file).map((m) => m.method);

before(async () => {
  writeFileSync(plainFile, '');
  writeFileSync(tasksFile, '');
  gateway = await startTestGateway(
    {
      plain: recordingServer(plainFile, { id: 'p' }),
      tasks: {
        command: process.execPath,
        args: ['test/fixtures/tasks-server.mjs'],
        cwd: ROOT,
        env: { RECORD_FILE: tasksFile, SERVER_ID: 't' },
      },
    },
    {},
    { profiles: { view: { tools: ['tasks__*'] } } },
  );
});

after(async () => {
  await gateway?.close();
});

describe('a method the gateway has no rule for', () => {
  test('on /servers/<name>/mcp it reaches the server, which answers it (its own -32601 included)', async () => {
    const body = request('acme/frobnicate', { level: 3 }, 'unknown-1');
    const answer = await post(`${gateway.url}/servers/plain/mcp`, body);
    assert.equal(answer.status, 404);
    assert.equal(answer.body.error.code, -32601);
    assert.equal(answer.body.error.message, 'Method not found: acme/frobnicate', 'the server’s own words');
    const seen = received(plainFile).find((m) => m.method === 'acme/frobnicate');
    assert.ok(seen, 'the server received it');
    assert.equal(seen.params.level, 3);
  });

  test('on /mcp it is -32601 saying where a server’s own methods are reached, and no server hears of it', async () => {
    const before = methodsAt(plainFile).length + methodsAt(tasksFile).length;
    const answer = await post(`${gateway.url}/mcp`, request('acme/other', {}, 'unknown-2'));
    assert.equal(answer.status, 404);
    assert.equal(answer.body.error.code, -32601);
    assert.match(answer.body.error.message, /acme\/other.*\/servers\/<name>\/mcp/);
    assert.ok(!methodsAt(plainFile).includes('acme/other') && !methodsAt(tasksFile).includes('acme/other'));
    assert.ok(methodsAt(plainFile).length + methodsAt(tasksFile).length >= before);
  });

  test('a method the core removed and no extension took up is still refused as removed, unheard', async () => {
    const answer = await post(`${gateway.url}/servers/tasks/mcp`, request('logging/setLevel', { level: 'debug' }));
    assert.equal(answer.status, 404);
    assert.match(answer.body.error.message, /logging\/setLevel was removed in MCP 2026-07-28/);
    assert.ok(!methodsAt(tasksFile).includes('logging/setLevel'));
  });
});

describe('a removed method an extension took up', () => {
  const taskGet = (taskId: string) => request('tasks/get', { taskId });

  test(
    'reaches a server that advertises the extension (tasks/get with Mcp-Name = taskId), under the server’s own ' +
      'task id',
    async () => {
      const declared = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };
      const call = request('tools/call', { name: 'slow', arguments: { ms: 30_000 }, _meta: declared });
      const created = await send(`${gateway.url}/servers/tasks/mcp`, call);
      const taskId = created.body.result?.taskId;
      assert.equal(typeof taskId, 'string', JSON.stringify(created.body));
      const body = request('tasks/get', { taskId, _meta: declared });
      const answer = await send(`${gateway.url}/servers/tasks/mcp`, body, { 'mcp-name': taskId });
      assert.equal(answer.body.result?.status, 'working', JSON.stringify(answer.body));
      const relayed = received(tasksFile).find((m) => m.method === 'tasks/get');
      assert.match(relayed?.params.taskId, /^t-/, 'the server is asked under its own id');
      // An id the gateway did not issue is answered as an unknown task, and never reaches the server.
      const unknown = request('tasks/get', { taskId: 'no-such-task', _meta: declared });
      const refused = await send(`${gateway.url}/servers/tasks/mcp`, unknown, { 'mcp-name': 'no-such-task' });
      assert.deepEqual(refused.body.error, {
        code: -32602,
        message:
          'Failed to retrieve task: Task not found. A task id is good only for the caller it was returned to, ' +
          'through ' +
          'this gateway (or a replica sharing its mrtr.secret), while its creating tool is still allowed; call the ' +
          'tool again for a new task',
      });
      assert.ok(!received(tasksFile).some((m) => m.params?.taskId === 'no-such-task'));
    },
  );

  test('the Mcp-Name header must mirror its taskId', async () => {
    const body = taskGet('task-a');
    const answer = await send(`${gateway.url}/servers/tasks/mcp`, body, { 'mcp-name': 'task-b' });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, -32020);
  });

  test('is refused as removed on a server that does not advertise it, naming the extension', async () => {
    const body = taskGet('x');
    const answer = await send(`${gateway.url}/servers/plain/mcp`, body, { 'mcp-name': 'x' });
    assert.equal(answer.status, 404);
    assert.equal(answer.body.error.code, -32601);
    assert.match(
      answer.body.error.message,
      new RegExp(`tasks/get was removed in MCP 2026-07-28; server plain does not advertise the extension ${TASKS}`),
    );
    assert.ok(!methodsAt(plainFile).includes('tasks/get'));
  });
});

describe('extensions in server/discover', () => {
  test('one server’s discover keeps its capabilities.extensions', async () => {
    const answer = await post(`${gateway.url}/servers/tasks/mcp`, request('server/discover'));
    assert.deepEqual(answer.body.result.capabilities.extensions, { [TASKS]: {} });
  });

  test('/mcp lists an extension when one server offers it, and says which in _meta', async () => {
    const answer = await post(`${gateway.url}/mcp`, request('server/discover'));
    const result = answer.body.result;
    assert.deepEqual(result.capabilities.extensions, { [TASKS]: {} });
    assert.deepEqual(result._meta['mcp-gateway/extensionServers'], { [TASKS]: ['tasks'] });
  });

  test('a profile’s discover keeps them too', async () => {
    const answer = await post(`${gateway.url}/profiles/view/mcp`, request('server/discover'));
    assert.deepEqual(answer.body.result.capabilities.extensions, { [TASKS]: {} });
    assert.deepEqual(answer.body.result._meta['mcp-gateway/extensionServers'], { [TASKS]: ['tasks'] });
  });
});

describe('the gateway’s own requests carry the full _meta', () => {
  test('its listen streams and probes name the version, capabilities and clientInfo', async () => {
    await eventually(() => methodsAt(plainFile).includes('subscriptions/listen'), 10_000);
    // The start-up probe is the first discover the server heard; later ones were callers' own, relayed.
    const lines = received(plainFile);
    const own = [
      lines.find((m) => m.method === 'server/discover'),
      ...lines.filter((m) => m.method === 'subscriptions/listen'),
    ];
    assert.ok(own.length >= 2 && own[0], JSON.stringify(own.map((m) => m?.method)));
    for (const message of own) {
      const meta = message.params._meta;
      assert.equal(meta['io.modelcontextprotocol/protocolVersion'], '2026-07-28');
      assert.deepEqual(meta['io.modelcontextprotocol/clientCapabilities'], {});
      assert.equal(
        meta['io.modelcontextprotocol/clientInfo']?.name,
        'mcp-gateway',
        `${message.method} names the gateway`,
      );
    }
  });
});
