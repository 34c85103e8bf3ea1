// The gateway as a conformant client: a tool whose x-mcp-header declarations break the spec's rules is left
// out of tools/list (on the server's endpoint and on /mcp) with a logged reason, and never called, even by
// a caller who names it before any list was read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { headersFor, post, request, ROOT, send } from './harness.js';
import { INVALID } from '../fixtures/header-tools-server.mjs';
import { tempDir } from '../temp.js';
import { recordingLog } from '../recording-log.js';

const dir = tempDir('header-rules-');
const record = path.join(dir, 'calls.log');
const invalidNames = Object.keys(INVALID);
const { log, lines } = recordingLog();
let gateway: RunningGateway;

const calledTools = () =>
  readFileSync(record, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
    .filter((m) => m.method === 'tools/call')
    .map((m) => m.params.name);

before(async () => {
  writeFileSync(record, '');
  const server = {
    command: process.execPath,
    args: ['test/fixtures/header-tools-server.mjs'],
    cwd: ROOT,
    env: { RECORD_FILE: record },
  };
  gateway = await startGateway(parseConfig({ listen: { port: 0 }, servers: { h: server } }, 'test', ROOT), log);
});

after(async () => {
  await gateway?.close();
});

function callBody(name: string) {
  return request('tools/call', { name, arguments: { a: 'x' } });
}

describe('tools with invalid x-mcp-header declarations', () => {
  test('are never called, even before any list was read (the gateway reads the list first)', async () => {
    for (const name of invalidNames) {
      const body = callBody(name);
      const answer = await post(`${gateway.url}/servers/h/mcp`, body, headersFor(body));
      assert.equal(answer.body.error?.code, -32602, `${name}: ${JSON.stringify(answer.body)}`);
      assert.match(
        answer.body.error.message,
        new RegExp(`Unknown tool: ${name} \\(mcp-gateway does not offer it: x-mcp-header`),
      );
    }
    assert.deepEqual(calledTools(), [], 'no invalid tool reached the server');
  });

  test('are left out of tools/list on the server’s endpoint, the valid ones kept as they came', async () => {
    const answer = await post(`${gateway.url}/servers/h/mcp`, request('tools/list'));
    const names = answer.body.result.tools.map((t: any) => t.name);
    assert.deepEqual(names, ['region', 'plain']);
    assert.equal(answer.body.result.tools[0].inputSchema.properties.region['x-mcp-header'], 'Region');
  });

  test('are left out of /mcp’s merged list, and unknown there', async () => {
    const answer = await post(`${gateway.url}/mcp`, request('tools/list'));
    assert.deepEqual(
      answer.body.result.tools.map((t: any) => t.name),
      ['h__region', 'h__plain'],
    );
    const body = callBody('h__null_name');
    const refused = await post(`${gateway.url}/mcp`, body, headersFor(body));
    assert.equal(refused.body.error?.code, -32602);
    assert.deepEqual(calledTools(), []);
  });

  test('each is logged once with the tool and the reason', () => {
    const left = lines.filter((w) => w.level === 'warn' && /x-mcp-header declarations/.test(w.msg));
    assert.deepEqual(left.map((w) => w.obj.tool).sort(), [...invalidNames].sort());
    const reason = (tool: string) => left.find((w) => w.obj.tool === tool)!.obj.reason as string;
    assert.match(reason('null_name'), /is null, not a string/);
    assert.match(reason('number_name'), /is number, not a string/);
    assert.match(reason('duplicate_any_case'), /repeats "Region"/);
    assert.match(reason('on_number'), /type "number"/);
    assert.match(reason('in_items'), /properties keys alone/);
    assert.match(reason('space_in_name'), /not an HTTP header token/);
  });

  test('the valid tools are called as before, their headers mirrored', async () => {
    const body = request('tools/call', { name: 'region', arguments: { region: 'eu-1' } });
    const answer = await send(`${gateway.url}/servers/h/mcp`, body, { 'mcp-param-region': 'eu-1' });
    assert.equal(answer.body.result?.content?.[0]?.text, 'called region');
    assert.deepEqual(calledTools(), ['region']);
  });
});
