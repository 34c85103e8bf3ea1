// A number no double holds exactly (a 64-bit id, 1e400) passes through the gateway as written, both ways:
// in a client's arguments and id to a stdio or HTTP server, and in a server's answer back to the client,
// served fresh or from the list cache, on /servers/<name>/mcp and on /mcp. JSON.parse alone would turn
// 12345678901234567890 into 12345678901234567000 (another record) and 1e400 into null. Node.js 22 and later;
// on Node.js 20 the gateway says at start that it cannot.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { EXACT_DEFAULT, EXACT_NUMBERS, exactReply } from '../fixtures/exact-numbers.mjs';
import { headersFor, META, ROOT, startTestGateway } from './harness.js';
import { onlyOnNode } from '../services.js';
import { tempDir } from '../temp.js';
import { writtenLog } from '../recording-log.js';

const BIG = '12345678901234567890';
const ARGUMENTS = `{"id":${BIG},"near":9007199254740993,"huge":1e400,"small":42,"pi":3.14159}`;

/** A request body written by hand: JSON.stringify cannot write these numbers. */
function callText(id: string, name: string): string {
  return (
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(name)},` +
    `"arguments":${ARGUMENTS},"_meta":${JSON.stringify(META)}}}`
  );
}

async function postText(
  url: string,
  method: string,
  body: string,
  name?: string,
): Promise<{ status: number; text: string }> {
  const headers = headersFor({ method, params: name === undefined ? {} : { name } });
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, text: await response.text() };
}

describe('on Node.js 22 and later', {
  skip: onlyOnNode(22, 'Node.js 20 cannot keep them (see the other suite)'),
}, () => {
  const folder = tempDir('mcp-gw-exact-');
  const recordFile = path.join(folder, 'stdio.jsonl');
  const httpBodies: string[] = [];
  let remote: http.Server;
  let gateway: RunningGateway;

  before(async () => {
    // An HTTP server answering with the same texts, recording every body it is sent.
    remote = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        httpBodies.push(body);
        const message = JSON.parse(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(exactReply(message.id, message.method));
      });
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/mcp`;
    gateway = await startTestGateway({
      x: {
        command: process.execPath,
        args: ['test/fixtures/exact-numbers-server.mjs'],
        cwd: ROOT,
        env: { RECORD_FILE: recordFile },
        era: 'modern',
      },
      h: { url, era: 'modern' },
    });
  });
  after(async () => {
    await gateway?.close();
    remote?.close();
  });

  /** The lines the stdio server got for `method` (none before the gateway has started it). */
  const received = (method: string) =>
    (existsSync(recordFile) ? readFileSync(recordFile, 'utf8').split('\n') : []).filter((line) =>
      line.includes(`"${method}"`),
    );

  test(
    'a stdio server gets the client’s arguments digit for digit, ' + 'and the client its id and the answer’s numbers',
    async () => {
      for (const [endpoint, name] of [
        ['/servers/x/mcp', 'lookup'],
        ['/mcp', 'x__lookup'],
      ]) {
        const before = received('tools/call').length;
        const answer = await postText(`${gateway.url}${endpoint}`, 'tools/call', callText(BIG, name!), name);
        assert.equal(answer.status, 200, answer.text);
        assert.ok(
          answer.text.startsWith(`{"jsonrpc":"2.0","id":${BIG},`),
          `the id as sent, on ${endpoint}: ${answer.text.slice(0, 80)}`,
        );
        assert.ok(
          answer.text.includes(`"structuredContent":${EXACT_NUMBERS}`),
          `the server's numbers as written, on ${endpoint}: ${answer.text}`,
        );
        const lines = received('tools/call');
        assert.equal(lines.length, before + 1);
        assert.ok(
          lines.at(-1)!.includes(`"arguments":${ARGUMENTS}`),
          `what reached the server from ${endpoint}: ${lines.at(-1)}`,
        );
      }
    },
  );

  test('an HTTP server likewise', async () => {
    const answer = await postText(`${gateway.url}/servers/h/mcp`, 'tools/call', callText(BIG, 'lookup'), 'lookup');
    assert.equal(answer.status, 200, answer.text);
    assert.ok(answer.text.startsWith(`{"jsonrpc":"2.0","id":${BIG},`), answer.text.slice(0, 80));
    assert.ok(answer.text.includes(`"structuredContent":${EXACT_NUMBERS}`), answer.text);
    const sent = httpBodies.filter((body) => body.includes('"tools/call"'));
    assert.ok(sent.at(-1)?.includes(`"arguments":${ARGUMENTS}`), `what reached the server: ${sent.at(-1)}`);
  });

  test('a cached list keeps them: fresh, from the cache, and merged on /mcp', async () => {
    const list = `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":${JSON.stringify(META)}}}`;
    for (const endpoint of ['/servers/x/mcp', '/servers/x/mcp', '/mcp', '/mcp']) {
      const answer = await postText(`${gateway.url}${endpoint}`, 'tools/list', list);
      assert.equal(answer.status, 200, answer.text);
      assert.ok(answer.text.includes(EXACT_DEFAULT), `${endpoint}: ${answer.text}`);
    }
    const fetched = received('tools/list');
    assert.ok(fetched.length <= 2, `the second asks were answered from the cache (${fetched.length} fetches)`);
  });
});

describe('on Node.js 20', { skip: onlyOnNode(20, 'this Node.js keeps numbers exact (the other suite)') }, () => {
  test('the gateway says at start that numbers beyond a double lose digits here, and names the way out', async () => {
    const written = writtenLog('warn');
    const config = parseConfig(
      {
        listen: { port: 0 },
        servers: {
          x: { command: process.execPath, args: ['test/fixtures/exact-numbers-server.mjs'], cwd: ROOT, era: 'modern' },
        },
      },
      'test',
      ROOT,
    );
    const gateway = await startGateway(config, written.logger);
    try {
      const warning = written.records().find((line: { msg: string }) => line.msg.includes('double precision'));
      assert.ok(warning, 'a warning at start');
      assert.match(warning.msg, /Node\.js 22 or later/);
    } finally {
      await gateway.close();
    }
  });
});
