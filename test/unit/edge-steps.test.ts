// The edge's steps one at a time (src/edge/admit.ts, read.ts, route.ts, judge.ts), each on a McpCall built
// from fake Node request/response objects and a security bundle: what each step answers and what it fills in.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import type { Upstream } from '../../bridge/upstream.js';
import type { Security } from '../../policy/security.js';
import { Router } from '../../src/aggregate/router.js';
import { TaskIdCodec } from '../../src/tasks/task-ids.js';
import { admit } from '../../src/edge/admit.js';
import { McpCall, type EdgeContext, type Endpoint } from '../../src/edge/call.js';
import { judge } from '../../src/edge/judge.js';
import { ToolHeaderIndex } from '../../src/edge/param-headers.js';
import { read } from '../../src/edge/read.js';
import { RequestTracker } from '../../src/edge/request-tracker.js';
import { route } from '../../src/edge/route.js';
import { silentLog } from '../../infra/log.js';
import { openSecurity as security } from '../open-security.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { ListMethod } from '../../protocol/mcp.js';

const upstream = {
  name: 'a',
  events: new EventEmitter(),
  request: async () => ({ jsonrpc: '2.0', id: 1, result: {} }),
} as unknown as Upstream;

function edgeWith(bundle: Security, refreshed: ListMethod[] = []): EdgeContext {
  const upstreams = new Map([['a', upstream]]);
  const router = new Router({
    upstreams,
    prefixes: new Map([['a', 'a']]),
    separator: '__',
    refresh: async (method) => void refreshed.push(method),
  });
  router.tools.add('a__echo', { server: 'a', name: 'echo', definition: { name: 'a__echo' } });
  const aggregate: Endpoint = { upstream, toolHeaders: new ToolHeaderIndex() };
  const endpoint: Endpoint = { upstream, toolHeaders: new ToolHeaderIndex() };
  return {
    upstreams,
    aggregate,
    router,
    maxBodyBytes: 1000,
    contextKey: Buffer.alloc(32),
    listen: undefined as never,
    retries: undefined,
    security: () => bundle,
    metrics: undefined,
    legacyClients: undefined,
    tracker: new RequestTracker(),
    log: silentLog,
    originAllowed: (origin) => origin === undefined || origin === 'http://ok.test',
    principalContext: () => 'ctx',
    endpointOf: (name) => (name === 'a' ? endpoint : undefined),
    paths: () => ['/mcp', '/servers/a/mcp'],
    tasks: new TaskIdCodec(undefined),
  };
}

interface Written {
  status?: number;
  body?: string;
  headers?: Record<string, unknown>;
}

function exchange(
  headers: Record<string, string>,
  body?: string,
): { incoming: IncomingMessage; outgoing: ServerResponse; written: Written } {
  const incoming = Object.assign(new PassThrough(), {
    headers,
    method: 'POST',
    url: '/mcp',
  }) as unknown as IncomingMessage;
  if (body !== undefined) (incoming as unknown as PassThrough).end(body);
  const written: Written = {};
  const outgoing = {
    destroyed: false,
    writeHead(status: number, headers?: Record<string, unknown>) {
      written.status = status;
      written.headers = headers;
      return this;
    },
    end(chunk?: Buffer) {
      if (chunk) written.body = chunk.toString();
      return this;
    },
    setHeader() {},
  } as unknown as ServerResponse;
  return { incoming, outgoing, written };
}

function callOn(edge: EdgeContext, headers: Record<string, string>, body?: string, server?: string) {
  const { incoming, outgoing, written } = exchange(headers, body);
  const endpoint = server === undefined ? edge.aggregate : edge.endpointOf(server);
  return {
    call: new McpCall(edge, { incoming, outgoing, path: '/mcp' }, endpoint, server ?? 'mcp', performance.now()),
    written,
  };
}

const POST = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
};
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const toolCall = (name: string): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, arguments: {}, _meta: META },
});

describe('admit', () => {
  test('an origin not allowed is refused with 403 before anything else', async () => {
    const { call, written } = callOn(edgeWith(await security()), { origin: 'http://evil.test' });
    assert.ok(await admit(call));
    assert.equal(written.status, 403);
    assert.match(written.body ?? '', /Origin http:\/\/evil.test is not allowed/);
  });

  test('an open gateway admits an anonymous caller and fills in its cache context', async () => {
    const { call } = callOn(edgeWith(await security()), {});
    assert.equal(await admit(call), undefined);
    assert.equal(call.principal.via, 'anonymous');
    assert.equal(typeof call.callerContext, 'string');
    assert.equal(call.grant, undefined);
  });

  test('a server that does not exist is a 404 naming the endpoints', async () => {
    const { call, written } = callOn(edgeWith(await security()), {}, undefined, 'nope');
    assert.ok(await admit(call));
    assert.equal(written.status, 404);
    assert.match(written.body ?? '', /No server named 'nope'. Endpoints: \/mcp, \/servers\/a\/mcp/);
  });
});

describe('read', () => {
  test('a wrong content type is refused before the body is read', async () => {
    const { call, written } = callOn(edgeWith(await security()), { ...POST, 'content-type': 'text/plain' }, '{}');
    const got = await read(call);
    assert.ok(!('kind' in got));
    assert.equal(written.status, 415);
  });

  test('a modern request comes back with its text; a notification is answered 202 here', async () => {
    const body = JSON.stringify(toolCall('a__echo'));
    const { call } = callOn(
      edgeWith(await security()),
      { ...POST, 'mcp-method': 'tools/call', 'mcp-name': 'a__echo' },
      body,
    );
    const got = await read(call);
    assert.ok('kind' in got && got.kind === 'request');
    assert.equal(got.text, body);
    assert.equal(call.method, 'tools/call');
    const note = callOn(
      edgeWith(await security()),
      POST,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: META } }),
    );
    assert.ok(!('kind' in (await read(note.call))));
    assert.equal(note.written.status, 202);
  });

  test('invalid JSON is a parse error', async () => {
    const { call, written } = callOn(edgeWith(await security()), POST, '{nope');
    await read(call);
    assert.equal(written.status, 400);
    assert.match(written.body ?? '', /Parse error/);
  });
});

describe('route and judge', () => {
  test('on /mcp a name is placed once; without policies a name nobody listed reads the lists again', async () => {
    const refreshed: ListMethod[] = [];
    const edge = edgeWith(await security(), refreshed);
    const { call } = callOn(edge, {});
    await admit(call);
    route(call, toolCall('a__echo'));
    assert.equal(call.target.kind === 'tools' && call.target.listed?.name, 'echo');
    assert.equal((await judge(call, toolCall('a__echo'))).allowed, true);
    assert.deepEqual(refreshed, []);
    route(call, toolCall('a__late'));
    await judge(call, toolCall('a__late'));
    assert.deepEqual(refreshed, ['tools/list']);
  });

  test('off /mcp without policies nothing is placed: the endpoint is the destination', async () => {
    const { call } = callOn(edgeWith(await security()), {}, undefined, 'a');
    await admit(call);
    route(call, toolCall('echo'));
    assert.equal(call.target.kind, 'none');
  });

  test(
    'with policies a denied name is refused without reading the lists; ' + 'an allowed unknown one reads them',
    async () => {
      const refreshed: ListMethod[] = [];
      const bundle = await security([
        {
          name: 'p',
          principals: { ids: ['*'] },
          allow: { servers: ['a'] },
          deny: { tools: ['a__crash'] },
          when: [],
          pin: false,
        },
      ]);
      const edge = edgeWith(bundle, refreshed);
      const { call } = callOn(edge, {});
      await admit(call);
      route(call, toolCall('a__crash'));
      const denied = await judge(call, toolCall('a__crash'));
      assert.equal(denied.allowed, false);
      assert.deepEqual(refreshed, []);
      route(call, toolCall('a__ghost'));
      const unknown = await judge(call, toolCall('a__ghost'));
      assert.deepEqual(refreshed, ['tools/list']);
      assert.deepEqual(unknown.refusal, {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32602, message: 'Unknown tool: a__ghost' },
      });
      assert.deepEqual(denied.refusal, {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32602, message: 'Unknown tool: a__crash' },
      });
    },
  );
});
