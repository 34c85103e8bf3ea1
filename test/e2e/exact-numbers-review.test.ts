// A 64-bit id or argument through a gateway that traces and checks `when:` conditions: the request is
// served (not a 500 from the span's id attribute), the condition reads the argument as a number (as it did
// before numbers were kept as written), and the server still gets every digit. Node.js 22 and later.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { KEEPS_EXACT_NUMBERS } from '../../src/protocol/exact-json.js';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp-receiver.js';
import { headersFor, META, ROOT, startTestGateway } from './harness.js';

const BIG = '12345678901234567890';

describe('on Node.js 22 and later', { skip: KEEPS_EXACT_NUMBERS ? false : 'Node.js 20 keeps no number raw' }, () => {
  const recordFile = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-gw-exact-review-')), 'stdio.jsonl');
  let receiver: OtlpReceiver;
  let gateway: RunningGateway;

  before(async () => {
    receiver = await startOtlpReceiver();
    gateway = await startTestGateway(
      { x: { command: process.execPath, args: ['test/fixtures/exact-numbers-server.mjs'], cwd: ROOT, env: { RECORD_FILE: recordFile }, era: 'modern' } },
      {},
      {
        telemetry: { serviceName: 'exact-review', traces: { endpoint: receiver.url, protocol: 'http/json', sampler: 'always_on' } },
        policies: [{ name: 'positive-ids', principals: { ids: ['*'] }, allow: { servers: ['x'] }, when: [{ tool: 'x__lookup', expr: 'args.id > 0' }] }],
      },
    );
  });
  after(async () => {
    await gateway?.close();
    await receiver?.close();
  });

  const post = async (name: string, id: string, args: string) => {
    const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args},"_meta":${JSON.stringify(META)}}}`;
    const response = await fetch(`${gateway.url}/servers/x/mcp`, { method: 'POST', headers: headersFor({ method: 'tools/call', params: { name } }), body });
    return { status: response.status, text: await response.text() };
  };
  const received = () =>
    existsSync(recordFile)
      ? readFileSync(recordFile, 'utf8')
          .split('\n')
          .filter((line) => line.includes('"tools/call"'))
      : [];

  test('a traced call with a 64-bit id is answered under that id', async () => {
    const answer = await post('lookup', BIG, '{"id":5}');
    assert.equal(answer.status, 200, answer.text);
    assert.ok(answer.text.startsWith(`{"jsonrpc":"2.0","id":${BIG},"result"`), answer.text.slice(0, 120));
  });

  test('a when: condition on a 64-bit argument holds as it did, and the server gets its digits', async () => {
    const answer = await post('lookup', '"cel-1"', `{"id":${BIG}}`);
    assert.equal(answer.status, 200, answer.text);
    assert.ok(answer.text.includes('"result"'), `allowed: ${answer.text.slice(0, 300)}`);
    assert.ok(received().at(-1)?.includes(`"arguments":{"id":${BIG}}`), `what reached the server: ${received().at(-1)}`);
    const refused = await post('lookup', '"cel-2"', '{"id":-1}');
    assert.match(refused.text, /refused by policy/i, 'the condition still decides');
  });

  test('a 2025 client’s tool name or resource uri sent as a 64-bit number is refused as invalid, not answered 500', async () => {
    const url = `${gateway.url}/servers/x/mcp`;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
    const opened = await fetch(url, { method: 'POST', headers, body: JSON.stringify(init) });
    assert.equal(opened.status, 200, await opened.text());
    const session = { ...headers, 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
    for (const [method, params] of [
      ['tools/call', `{"name":${BIG},"arguments":{}}`],
      ['resources/read', `{"uri":${BIG}}`],
    ] as const) {
      const response = await fetch(url, { method: 'POST', headers: session, body: `{"jsonrpc":"2.0","id":"bad","method":"${method}","params":${params}}` });
      const text = await response.text();
      assert.notEqual(response.status, 500, `${method}: ${text}`);
      assert.match(text, /"error"/, `${method}: ${text}`);
    }
  });
});
