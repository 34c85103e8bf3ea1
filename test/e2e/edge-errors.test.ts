// Every refusal the HTTP edge makes, with its status and JSON-RPC code, and schema-valid messages
// for every method on both eras.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import {
  everything,
  fixture,
  headersFor,
  META,
  post,
  request,
  schemaProblems,
  startTestGateway,
  send,
} from './harness.js';

let gateway: RunningGateway;
let url: string;
before(async () => {
  gateway = await startTestGateway(
    { modern: fixture('modern-server'), everything },
    { allowedOrigins: ['https://app.example.com'], maxBodyBytes: 64 * 1024 },
  );
  url = `${gateway.url}/servers/modern/mcp`;
});
after(() => gateway.close());

const call = () => request('tools/call', { name: 'echo', arguments: { text: 'x' } });

function assertRefused(answer: { status: number; body: any }, status: number, code: number, text?: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body.error.code, code);
  if (text) assert.match(answer.body.error.message, text);
  assert.deepEqual(schemaProblems('', answer.body), []);
}

describe('transport rules', () => {
  test('unknown server → 404 naming the known ones', async () => {
    const answer = await post(`${gateway.url}/servers/nope/mcp`, call());
    assertRefused(
      answer,
      404,
      -32600,
      /No server named 'nope'. Endpoints: \/mcp, \/servers\/modern\/mcp, \/servers\/everything\/mcp/,
    );
  });

  test('GET and DELETE → 405 with Allow: POST, OPTIONS', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(url, { method });
      assert.equal(response.status, 405);
      assert.equal(response.headers.get('allow'), 'POST, OPTIONS');
    }
  });

  test('a foreign Origin → 403; loopback and listed origins pass', async () => {
    assertRefused(await send(url, call(), { origin: 'https://evil.example' }), 403, -32600, /listen.allowedOrigins/);
    assert.equal((await send(url, call(), { origin: 'http://localhost:3000' })).status, 200);
    assert.equal((await send(url, call(), { origin: 'https://app.example.com' })).status, 200);
  });

  test('Content-Type other than JSON → 415', async () => {
    assertRefused(await send(url, call(), { 'content-type': 'text/plain' }), 415, -32600, /application\/json/);
  });

  test('Accept without text/event-stream → 406', async () => {
    assertRefused(await send(url, call(), { accept: 'application/json' }), 406, -32600, /text\/event-stream/);
  });

  test('body over the cap → 413 naming the setting', async () => {
    const big = request('tools/call', { name: 'echo', arguments: { text: 'x'.repeat(70 * 1024) } });
    assertRefused(await post(url, big), 413, -32600, /listen.maxBodyBytes/);
  });

  test(
    'a body far over the cap, still being written when the 413 is sent: the client reads the 413 (no EPIPE) and ' +
      'the connection stays usable',
    async () => {
      const big = JSON.stringify(
        request('tools/call', { name: 'echo', arguments: { text: 'x'.repeat(3 * 1024 * 1024) } }),
      );
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const ask = (body: string) =>
        new Promise<{ status: number; socket: unknown }>((resolve, reject) => {
          const req = http.request(
            url,
            { method: 'POST', agent, headers: { ...headersFor(call()), 'content-length': Buffer.byteLength(body) } },
            (res) => {
              res.resume();
              res.on('end', () => resolve({ status: res.statusCode!, socket: req.socket }));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      try {
        for (let i = 0; i < 5; i++) {
          const refused = await ask(big);
          assert.equal(refused.status, 413);
          const next = await ask(JSON.stringify(call()));
          assert.equal(next.status, 200);
          assert.equal(next.socket, refused.socket, 'the same kept-alive connection answered the next request');
        }
      } finally {
        agent.destroy();
      }
    },
  );

  test('unparsable JSON → 400/-32700', async () => {
    assertRefused(await post(url, '{"jsonrpc":', headersFor(call())), 400, -32700);
  });

  test('a batch → 400/-32600', async () => {
    assertRefused(await post(url, [call(), call()], headersFor(call())), 400, -32600, /Batches/);
  });

  test('a malformed envelope → 400/-32600', async () => {
    assertRefused(
      await post(url, { jsonrpc: '1.0', id: 1, method: 'tools/list' }, headersFor({ method: 'tools/list' })),
      400,
      -32600,
    );
    assertRefused(
      await post(
        url,
        { jsonrpc: '2.0', id: null, method: 'tools/list', params: { _meta: META } },
        headersFor({ method: 'tools/list' }),
      ),
      400,
      -32600,
    );
  });

  test('a notification → 202 with no body', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: headersFor({ method: 'notifications/cancelled' }),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
    });
    assert.equal(response.status, 202);
    assert.equal(await response.text(), '');
  });
});

describe('modern request rules', () => {
  test('missing MCP-Protocol-Version, Mcp-Method or Mcp-Name → 400/-32020', async () => {
    for (const drop of ['mcp-protocol-version', 'mcp-method', 'mcp-name']) {
      const headers = headersFor(call());
      delete headers[drop];
      assertRefused(await post(url, call(), headers), 400, -32020);
    }
  });

  test('headers that differ from the body → 400/-32020', async () => {
    assertRefused(await send(url, call(), { 'mcp-name': 'other' }), 400, -32020, /Mcp-Name/);
    assertRefused(await send(url, call(), { 'mcp-method': 'tools/list' }), 400, -32020, /Mcp-Method/);
    const read = request('resources/read', { uri: 'fixture://hello' });
    assertRefused(await send(url, read, { 'mcp-name': 'fixture://other' }), 400, -32020);
  });

  test('an unsupported version → 400/-32022 with supported and requested', async () => {
    const body = request('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } });
    const answer = await send(url, body, { 'mcp-protocol-version': '2099-01-01' });
    assertRefused(answer, 400, -32022);
    assert.deepEqual(answer.body.error.data, { supported: ['2026-07-28'], requested: '2099-01-01' });
  });

  test('missing _meta keys → 400/-32602', async () => {
    const noMeta = { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} };
    assertRefused(await post(url, noMeta, headersFor(noMeta)), 400, -32602, /protocolVersion/);
    const noCapabilities = {
      jsonrpc: '2.0',
      id: 6,
      method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
    };
    assertRefused(await post(url, noCapabilities, headersFor(noCapabilities)), 400, -32602, /clientCapabilities/);
  });

  test('a 2025 initialize opens a legacy session (the 2025 rules take over for it)', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
    };
    const answer = await post(url, init, {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.result.protocolVersion, '2025-11-25');
    assert.match(answer.headers.get('mcp-session-id') ?? '', /^[\x21-\x7e]+$/);
  });

  test('removed and unknown methods → 404/-32601', async () => {
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'tools/frobnicate']) {
      const body = request(method, {});
      assertRefused(await post(url, body), 404, -32601);
    }
  });

  test('an ordinary upstream error travels with 200', async () => {
    const body = request('tools/call', { name: 'nope', arguments: {} });
    const answer = await post(url, body);
    assertRefused(answer, 200, -32602);
  });

  test('a base64 Mcp-Name carries a non-ASCII name', async () => {
    const body = request('prompts/get', { name: 'grüß', arguments: {} });
    const encoded = `=?base64?${Buffer.from('grüß').toString('base64')}?=`;
    const answer = await send(url, body, { 'mcp-name': encoded });
    assert.equal(answer.status, 200, 'the edge accepts it; the upstream answers that the prompt does not exist');
    assert.ok(answer.body.error);
  });
});

describe('Mcp-Param headers, CORS and progress tokens', () => {
  const region = (value: string) => request('tools/call', { name: 'region', arguments: { region: value } });

  test('once the tool is listed, Mcp-Param-Region must match its argument', async () => {
    await post(url, request('tools/list'));
    assertRefused(await post(url, region('eu')), 400, -32020, /mcp-param-region is missing/);
    assertRefused(await send(url, region('eu'), { 'mcp-param-region': 'us' }), 400, -32020, /does not match/);
    const ok = await send(url, region('Zürich'), {
      'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=`,
    });
    assert.equal(ok.body.result.content[0].text, 'region Zürich');
  });

  test('a preflight from an allowed origin is answered; answers name the origin', async () => {
    const preflight = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-method, mcp-param-region',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.equal(preflight.headers.get('access-control-allow-headers'), 'content-type, mcp-method, mcp-param-region');
    const refused = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(refused.status, 403);
    const answer = await send(url, call(), { origin: 'http://localhost:5173' });
    assert.equal(answer.headers.get('access-control-allow-origin'), 'http://localhost:5173');
  });

  test('a progressToken that is neither a string nor an integer → 400/-32602', async () => {
    const body = request('tools/call', {
      name: 'echo',
      arguments: { text: 'x' },
      _meta: { progressToken: { nested: true } },
    });
    assertRefused(await post(url, body), 400, -32602, /progressToken/);
  });
});

describe('every message the gateway emits is schema-valid', () => {
  const methods: [string, Record<string, unknown>][] = [
    ['server/discover', {}],
    ['tools/list', {}],
    ['tools/call', { name: 'echo', arguments: { text: 'hi' } }],
    ['prompts/list', {}],
    ['prompts/get', { name: 'greet', arguments: { name: 'Ada' } }],
    ['resources/list', {}],
    ['resources/templates/list', {}],
    ['resources/read', { uri: 'fixture://hello' }],
  ];
  for (const server of ['modern', 'everything']) {
    test(`${server}: every list, call, read and discover`, async () => {
      for (const [method, params] of methods) {
        let actual = params;
        if (server === 'everything' && method === 'tools/call') actual = { name: 'echo', arguments: { message: 'hi' } };
        if (server === 'everything' && method === 'prompts/get') actual = { name: 'simple-prompt', arguments: {} };
        if (server === 'everything' && method === 'resources/read')
          actual = { uri: 'demo://resource/static/document/architecture.md' };
        const answer = await post(`${gateway.url}/servers/${server}/mcp`, request(method, actual));
        assert.equal(answer.status, 200);
        assert.deepEqual(
          schemaProblems(method, answer.body),
          [],
          `${server} ${method}: ${JSON.stringify(answer.body).slice(0, 300)}`,
        );
      }
    });
  }

  test('progress notifications over SSE', async () => {
    const body = request('tools/call', { name: 'progress', arguments: { steps: 2 }, _meta: { progressToken: 'tok' } });
    const answer = await post(url, body);
    assert.equal(answer.headers.get('content-type'), 'text/event-stream');
    assert.equal(answer.headers.get('x-accel-buffering'), 'no');
    assert.deepEqual(
      answer.events.map((e) => e.method ?? 'response'),
      ['notifications/progress', 'notifications/progress', 'response'],
    );
    assert.deepEqual(answer.events.map((e) => e.params?.progressToken).slice(0, 2), ['tok', 'tok']);
    assert.equal(answer.body.id, body.id);
    for (const event of answer.events) assert.deepEqual(schemaProblems('tools/call', event), []);
  });
});
