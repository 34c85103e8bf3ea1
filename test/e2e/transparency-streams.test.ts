// Listen relay from remote modern upstreams, compared with the same server asked directly: a client holding
// subscriptions/listen on /servers/<name>/mcp or /mcp hears the upstream's tools and prompts list changes
// whether the upstream writes its listen stream as SSE (SDK v2) or as a chunked
// application/json body of one message per line (as some servers, the conformance reference among them, do).
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { serve } from '@hono/node-server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { RunningGateway } from '../../src/gateway.js';
import { startLegacyHttpServer, type LegacyHttpServer } from '../fixtures/http-servers.js';
import { eachSseMessage, headersFor, request, schemaProblems, startTestGateway, until } from './harness.js';
import { scaled } from '../timing.js';

const HOST = '127.0.0.1';
/**
 * How long to wait for the relayed change before calling it lost. The spec's "within 1 s of the change" is a
 * latency target (a bench's concern); one event on a loaded machine is one sample, so the test only asks that
 * the change arrives, with room for a stall.
 */
const HEARD_WITHIN_MS = scaled(10_000);

interface ChangingServer {
  url: string;
  toolsChanged(): void;
  promptsChanged(): void;
  /** subscriptions/listen requests the server has received. */
  listens(): number;
  close(): Promise<void>;
}

function listening(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, HOST, () => resolve(`http://${HOST}:${(server.address() as AddressInfo).port}/mcp`)),
  );
}

/** An SDK v2 server over HTTP whose tools and prompts change at run time (announced on its listen streams). */
async function sdkServer(): Promise<ChangingServer> {
  let version = 0;
  let listens = 0;
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'changing-sdk', version: '1.0.0' });
      server.registerTool(`tool-${version}`, { description: 'Renamed on every change' }, async () => ({ content: [] }));
      server.registerPrompt(`prompt-${version}`, { description: 'Renamed on every change' }, () => ({ messages: [] }));
      return server;
    },
    { legacy: 'reject' },
  );
  const server = await new Promise<Server>((resolve) => {
    const fetch = (request: Request): Promise<Response> => {
      if (request.headers.get('mcp-method') === 'subscriptions/listen') listens++;
      return handler.fetch(request);
    };
    const s = serve({ fetch, hostname: HOST, port: 0 }, () => resolve(s as Server)) as Server;
  });
  return {
    url: `http://${HOST}:${(server.address() as AddressInfo).port}/mcp`,
    toolsChanged: () => (version++, handler.notify.toolsChanged()),
    promptsChanged: () => (version++, handler.notify.promptsChanged()),
    listens: () => listens,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A modern server that writes its listen stream as chunked application/json, one message per line, kept open. */
async function lineServer(): Promise<ChangingServer> {
  const streams = new Set<{ res: ServerResponse; id: unknown; tools: boolean; prompts: boolean }>();
  let listens = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk));
    req.on('end', () => {
      const { id, method, params } = JSON.parse(text);
      if (method === 'subscriptions/listen') {
        listens++;
        const tools = params.notifications?.toolsListChanged === true;
        const prompts = params.notifications?.promptsListChanged === true;
        res.writeHead(200, { 'content-type': 'application/json' });
        const honoured = { ...(tools && { toolsListChanged: true }), ...(prompts && { promptsListChanged: true }) };
        res.write(
          JSON.stringify({
            jsonrpc: '2.0',
            method: 'notifications/subscriptions/acknowledged',
            params: { notifications: honoured, _meta: { 'io.modelcontextprotocol/subscriptionId': id } },
          }) + '\n',
        );
        const stream = { res, id, tools, prompts };
        streams.add(stream);
        res.on('close', () => streams.delete(stream));
        return;
      }
      const result =
        method === 'server/discover'
          ? {
              supportedVersions: ['2026-07-28'],
              capabilities: { tools: { listChanged: true }, prompts: { listChanged: true } },
              ttlMs: 0,
              cacheScope: 'public',
            }
          : method === 'tools/list'
            ? { tools: [], ttlMs: 0, cacheScope: 'public' }
            : method === 'prompts/list'
              ? { prompts: [], ttlMs: 0, cacheScope: 'public' }
              : undefined;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          result
            ? { jsonrpc: '2.0', id, result: { resultType: 'complete', ...result } }
            : { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } },
        ),
      );
    });
  });
  const url = await listening(server);
  const announce = (kind: 'tools' | 'prompts'): void => {
    for (const stream of streams) {
      if (!stream[kind]) continue;
      const note = {
        jsonrpc: '2.0',
        method: `notifications/${kind}/list_changed`,
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': stream.id } },
      };
      stream.res.write(JSON.stringify(note) + '\n');
    }
  };
  return {
    url,
    toolsChanged: () => announce('tools'),
    promptsChanged: () => announce('prompts'),
    listens: () => listens,
    async close() {
      for (const stream of streams) stream.res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const CHANGES = [
  {
    flag: 'toolsListChanged',
    method: 'notifications/tools/list_changed',
    change: (s: ChangingServer) => s.toolsChanged(),
  },
  {
    flag: 'promptsListChanged',
    method: 'notifications/prompts/list_changed',
    change: (s: ChangingServer) => s.promptsChanged(),
  },
] as const;

/** Hands each message of a body written as one JSON message per line to `onMessage` as it arrives. */
async function eachJsonLine(body: ReadableStream<Uint8Array>, onMessage: (message: any) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) if (line.trim()) onMessage(JSON.parse(line));
  }
}

/**
 * A subscriptions/listen stream read as SSE or as JSON lines (whichever the server writes): its messages in
 * order until closed.
 */
async function openListen(url: string, notifications: Record<string, unknown>) {
  const body = request('subscriptions/listen', { notifications });
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: headersFor(body),
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const messages: any[] = [];
  const sse = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const read = sse
    ? eachSseMessage(response.body!, (message) => messages.push(message))
    : eachJsonLine(response.body!, (message) => messages.push(message));
  read.catch(() => {}); // closed by the test
  return { id: body.id, messages, close: () => controller.abort() };
}

/** Opens a listen stream at `url`, waits for its acknowledgement, changes the list, and returns what arrived. */
async function hearChange(url: string, server: ChangingServer, kind: (typeof CHANGES)[number]) {
  const listen = await openListen(url, { [kind.flag]: true });
  try {
    assert.ok(await until(() => listen.messages.length >= 1, 5_000), `no acknowledgement at ${url}`);
    kind.change(server);
    const heard = await until(() => listen.messages.some((m) => m.method === kind.method), HEARD_WITHIN_MS, 10);
    return { heard, listen };
  } finally {
    listen.close();
  }
}

for (const [label, start] of [
  ['an SDK v2 server (SSE listen stream)', sdkServer],
  ['a server writing its listen stream as JSON lines', lineServer],
] as const) {
  describe(`list changes from ${label}, configured as a remote url: upstream`, () => {
    let server: ChangingServer;
    let gateway: RunningGateway;
    before(async () => {
      server = await start();
      gateway = await startTestGateway({ remote: { url: server.url } });
      // The gateway holds its own listen stream to the upstream once the upstream is ready.
      assert.ok(
        await until(() => server.listens() === 1, 5_000),
        'the gateway opened its listen stream to the upstream',
      );
    });
    after(async () => {
      await gateway.close();
      await server.close();
    });

    for (const kind of CHANGES) {
      test(`${kind.flag}: heard directly, through /servers/remote/mcp and through /mcp`, async () => {
        const direct = await hearChange(server.url, server, kind);
        assert.ok(
          direct.heard,
          `the server itself announces ${kind.method}: ${JSON.stringify(direct.listen.messages)}`,
        );
        for (const endpoint of ['/servers/remote/mcp', '/mcp']) {
          const through = await hearChange(`${gateway.url}${endpoint}`, server, kind);
          assert.ok(through.heard, `${endpoint}: ${JSON.stringify(through.listen.messages)}`);
          const [ack, ...rest] = through.listen.messages;
          assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
          assert.deepEqual(ack.params.notifications, { [kind.flag]: true });
          const change = rest.find((m) => m.method === kind.method);
          assert.equal(change.params._meta['io.modelcontextprotocol/subscriptionId'], through.listen.id);
          assert.ok(
            rest.every((m) => m.method === kind.method),
            `only what was asked for: ${JSON.stringify(rest)}`,
          );
          for (const message of through.listen.messages) assert.deepEqual(schemaProblems('', message), []);
        }
      });
    }
  });
}

describe("list changes from a remote 2025 upstream (its session's GET stream), unchanged", () => {
  let server: LegacyHttpServer;
  let gateway: RunningGateway;
  before(async () => {
    server = await startLegacyHttpServer();
    gateway = await startTestGateway({ legacy: { url: server.url } });
    assert.ok(await until(() => server.openGetStreams === 1, 5_000));
  });
  after(async () => {
    await gateway.close();
    await server.close();
  });

  test(`toolsListChanged: heard through /servers/legacy/mcp and /mcp`, async () => {
    for (const endpoint of ['/servers/legacy/mcp', '/mcp']) {
      const listen = await openListen(`${gateway.url}${endpoint}`, { toolsListChanged: true });
      try {
        assert.ok(await until(() => listen.messages.length >= 1, 5_000));
        server.toolsChanged();
        assert.ok(
          await until(
            () => listen.messages.some((m) => m.method === 'notifications/tools/list_changed'),
            HEARD_WITHIN_MS,
            10,
          ),
          JSON.stringify(listen.messages),
        );
      } finally {
        listen.close();
      }
    }
  });
});
