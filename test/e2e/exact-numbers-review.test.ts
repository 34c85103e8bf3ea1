// A 64-bit id or argument through a gateway that traces and checks `when:` conditions: the request is
// served (not a 500 from the span's id attribute), the condition reads the argument as a number (as it did
// before numbers were kept as written), and the server still gets every digit. Node.js 22 and later.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp-receiver.js';
import { headersFor, META, ROOT, startTestGateway } from './harness.js';
import { onlyOnNode } from '../services.js';
import { tempDir } from '../temp.js';

const BIG = '12345678901234567890';
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

describe('on Node.js 22 and later', { skip: onlyOnNode(22, 'Node.js 20 keeps no number raw') }, () => {
  const recordFile = path.join(tempDir('mcp-gw-exact-review-'), 'stdio.jsonl');
  let receiver: OtlpReceiver;
  let gateway: RunningGateway;

  before(async () => {
    receiver = await startOtlpReceiver();
    gateway = await startTestGateway(
      {
        x: {
          command: process.execPath,
          args: ['test/fixtures/exact-numbers-server.mjs'],
          cwd: ROOT,
          env: { RECORD_FILE: recordFile },
          era: 'modern',
        },
      },
      {},
      {
        telemetry: {
          serviceName: 'exact-review',
          traces: { endpoint: receiver.url, protocol: 'http/json', sampler: 'always_on' },
        },
        policies: [
          {
            name: 'positive-ids',
            principals: { ids: ['*'] },
            allow: { servers: ['x'] },
            when: [{ tool: 'x__lookup', expr: 'args.id > 0' }],
          },
        ],
      },
    );
  });
  after(async () => {
    await gateway?.close();
    await receiver?.close();
  });

  const post = async (name: string, id: string, args: string) => {
    const body =
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args},` +
      `"_meta":${JSON.stringify(META)}}}`;
    const response = await fetch(`${gateway.url}/servers/x/mcp`, {
      method: 'POST',
      headers: headersFor({ method: 'tools/call', params: { name } }),
      body,
    });
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
    assert.ok(
      received().at(-1)?.includes(`"arguments":{"id":${BIG}}`),
      `what reached the server: ${received().at(-1)}`,
    );
    const refused = await post('lookup', '"cel-2"', '{"id":-1}');
    assert.match(refused.text, /refused by policy/i, 'the condition still decides');
  });

  test(
    'a 2025 client’s tool name or resource uri sent as a 64-bit number is refused as invalid, ' + 'not answered 500',
    async () => {
      const url = `${gateway.url}/servers/x/mcp`;
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      };
      const opened = await fetch(url, { method: 'POST', headers, body: JSON.stringify(init) });
      assert.equal(opened.status, 200, await opened.text());
      const session = {
        ...headers,
        'mcp-session-id': opened.headers.get('mcp-session-id')!,
        'mcp-protocol-version': '2025-11-25',
      };
      for (const [method, params] of [
        ['tools/call', `{"name":${BIG},"arguments":{}}`],
        ['resources/read', `{"uri":${BIG}}`],
      ] as const) {
        const response = await fetch(url, {
          method: 'POST',
          headers: session,
          body: `{"jsonrpc":"2.0","id":"bad","method":"${method}","params":${params}}`,
        });
        const text = await response.text();
        assert.notEqual(response.status, 500, `${method}: ${text}`);
        assert.match(text, /"error"/, `${method}: ${text}`);
      }
    },
  );
});

/** server/discover of the small HTTP servers below. */
const DISCOVER = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: {} },
  ttlMs: 0,
  cacheScope: 'public',
  _meta: { [SERVER_INFO]: { name: 'r', version: '1' } },
};

describe('a server answering with a bare number beyond a double', {
  skip: onlyOnNode(22, 'Node.js 20 keeps no number raw'),
}, () => {
  // Not a result object, so nothing to complete: the gateway passes it on as written, as it passed the double
  // on before, and stays up. (Kept as written, it was taken for an object and written to, which threw.)
  const reply = (id: unknown, method: string): string =>
    method === 'server/discover'
      ? JSON.stringify({ jsonrpc: '2.0', id, result: DISCOVER })
      : method === 'tools/list'
        ? JSON.stringify({
            jsonrpc: '2.0',
            id,
            result: {
              resultType: 'complete',
              tools: [{ name: 't', inputSchema: { type: 'object' } }],
              ttlMs: 0,
              cacheScope: 'public',
            },
          })
        : `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${BIG}}`;
  let remote: http.Server;
  let gateway: RunningGateway;
  const unhandled: unknown[] = [];
  const note = (error: unknown) => unhandled.push(error);

  before(async () => {
    process.on('unhandledRejection', note);
    remote = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const message = JSON.parse(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(reply(message.id, message.method));
      });
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    const script = `const reply = ${reply
      .toString()
      .replace(/DISCOVER/g, JSON.stringify(DISCOVER))
      .replace(/BIG/g, JSON.stringify(BIG))};
      require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
        const m = JSON.parse(line);
        if (m.id !== undefined && m.method) process.stdout.write(reply(m.id, m.method) + '\\n');
      });`;
    gateway = await startTestGateway({
      h: { url: `http://127.0.0.1:${(remote.address() as AddressInfo).port}/mcp`, era: 'modern', timeoutMs: 5_000 },
      s: { command: process.execPath, args: ['-e', script], cwd: ROOT, era: 'modern', timeoutMs: 5_000 },
    });
  });
  after(async () => {
    process.off('unhandledRejection', note);
    await gateway?.close();
    remote?.close();
  });

  test('over HTTP and stdio, on its endpoint and on /mcp, the client gets it as written', async () => {
    for (const [endpoint, name] of [
      ['/servers/h/mcp', 't'],
      ['/mcp', 'h__t'],
      ['/servers/s/mcp', 't'],
      ['/mcp', 's__t'],
    ] as const) {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: {}, _meta: META },
      });
      const response = await fetch(`${gateway.url}${endpoint}`, {
        method: 'POST',
        headers: headersFor({ method: 'tools/call', params: { name } }),
        body,
        signal: AbortSignal.timeout(10_000),
      });
      const text = await response.text();
      assert.equal(response.status, 200, `${endpoint} ${name}: ${text}`);
      assert.equal(text, `{"jsonrpc":"2.0","id":1,"result":${BIG}}`, `${endpoint} ${name}`);
    }
    assert.deepEqual(unhandled, [], 'no promise rejected unhandled (which ends a gateway process)');
  });
});

describe('an HTTP server answering over SSE a request whose id is beyond a double', {
  skip: onlyOnNode(22, 'Node.js 20 keeps no number raw'),
}, () => {
  // The request goes to an HTTP server under the client's own id. One server echoes the id as it came, one
  // as JSON.parse read it (a double: 12345678901234567000); over JSON both were always taken, over SSE the
  // answer must still be known as the answer, not waited past until the timeout.
  let remote: http.Server;
  let gateway: RunningGateway;

  before(async () => {
    remote = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const message = JSON.parse(body);
        const id = req.url === '/exact/mcp' ? /"id":(-?\d+|"[^"]*")/.exec(body)![1] : JSON.stringify(message.id);
        const result =
          message.method === 'server/discover'
            ? DISCOVER
            : message.method === 'tools/list'
              ? {
                  resultType: 'complete',
                  tools: [{ name: 't', inputSchema: { type: 'object' } }],
                  ttlMs: 0,
                  cacheScope: 'public',
                }
              : { resultType: 'complete', content: [{ type: 'text', text: 'done' }] };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":${JSON.stringify(result)}}\n\n`);
      });
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
    gateway = await startTestGateway({
      exact: { url: `${base}/exact/mcp`, era: 'modern', timeoutMs: 3_000 },
      double: { url: `${base}/double/mcp`, era: 'modern', timeoutMs: 3_000 },
    });
  });
  after(async () => {
    await gateway?.close();
    remote?.close();
  });

  test('the answer is taken at once and carries the client’s id as sent', async () => {
    for (const server of ['exact', 'double']) {
      const body =
        `{"jsonrpc":"2.0","id":${BIG},"method":"tools/call","params":{"name":"t","arguments":{},` +
        `"_meta":${JSON.stringify(META)}}}`;
      const response = await fetch(`${gateway.url}/servers/${server}/mcp`, {
        method: 'POST',
        headers: headersFor({ method: 'tools/call', params: { name: 't' } }),
        body,
      });
      const text = await response.text();
      assert.equal(response.status, 200, `${server}: ${text}`);
      assert.ok(text.includes(`"id":${BIG},"result"`) && text.includes('"done"'), `${server}: ${text}`);
      // No clock: an answer the gateway could not match to the call would end as the upstream's timeout
      // error (timeoutMs), not as this result with the client's id.
    }
  });
});
