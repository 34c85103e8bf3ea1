// 2025-era clients downstream (issue #10): the SDK 1.x client, the SDK v2 client in legacy mode and raw HTTP
// speak MCP 2025 (initialize, Mcp-Session-Id, the GET stream, DELETE) to the gateway's own endpoints, which
// serve them from the same modern core; a modern upstream's input_required reaches them as real
// server→client requests on the POST's stream. The SDK v2 client in auto mode still picks 2026-07-28, and
// modern requests are served as before whatever session headers they carry.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, headersFor, META, post, request, ROOT, startTestGateway, VERSION, everything, textOf } from './harness.js';

// ---- plumbing ---------------------------------------------------------------------------------------------

const SECRET = 'legacy-clients-e2e-secret-0123456789abcdef';
const OTHER_SECRET = 'another-legacy-clients-secret-fedcba9876543210';
const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];
const PROTOCOL_META = 'io.modelcontextprotocol/protocolVersion';
/** The modern SDK v2 server that asks for input through input_required (elicitation under the key "confirm"). */
const mrtr = { command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/mrtr-server.ts'], cwd: ROOT };
const ELICIT_OK = { action: 'accept' as const, content: { ok: true } };
const CONFIRMED = 'answer={"ok":true} stateIntact=true';

/** Per endpoint: the names a client uses there. */
const ROUTES = [
  { endpoint: '/servers/modern/mcp', echo: 'echo', progress: 'progress', elicitEndpoint: '/servers/mrtr/mcp', confirm: 'confirm' },
  { endpoint: '/mcp', echo: 'modern__echo', progress: 'modern__progress', elicitEndpoint: '/mcp', confirm: 'mrtr__confirm' },
] as const;

/** Parses an SSE body (or the part of one read so far) into its JSON messages; events without data are skipped. */
function parseSse(text: string): any[] {
  const messages: any[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''));
    if (data.length && data.join('\n').trim()) messages.push(JSON.parse(data.join('\n')));
  }
  return messages;
}

interface Exchange {
  status: number;
  headers: Headers;
  /** The JSON-RPC response (the last message carrying a result or an error), if any. */
  body: any;
  /** Every JSON message of the answer in order (one for a JSON answer). */
  messages: any[];
  text: string;
}

/** One HTTP exchange, read to the end; never throws on a status or a body that is not JSON. */
async function exchange(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Exchange> {
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  let messages: any[] = [];
  if (type.startsWith('text/event-stream')) messages = parseSse(text);
  else if (text) {
    try {
      messages = [JSON.parse(text)];
    } catch {
      // not JSON: the status says it all
    }
  }
  const found = [...messages].reverse().find((m) => m && typeof m === 'object' && ('result' in m || 'error' in m));
  return { status: response.status, headers: response.headers, body: found ?? (Array.isArray(messages[0]) ? messages[0] : undefined), messages, text };
}

interface Session {
  url: string;
  id: string;
  version: string;
}

/** What a 2025 Streamable HTTP client sends: no Mcp-Method, no modern _meta; the session's headers once it has one. */
function legacyHeaders(session?: Session): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (session) {
    headers['mcp-session-id'] = session.id;
    headers['mcp-protocol-version'] = session.version;
  }
  return headers;
}

let nextLegacyId = 1;
/** A 2025-style request: params (if any) without the modern _meta keys. */
function legacy(method: string, params?: Record<string, unknown>, id: string | number = `legacy-${nextLegacyId++}`) {
  return { jsonrpc: '2.0' as const, id, method, ...(params === undefined ? {} : { params }) };
}

function initializeBody(protocolVersion: string, capabilities: Record<string, unknown> = {}) {
  return legacy('initialize', { protocolVersion, capabilities, clientInfo: { name: 'raw-2025-client', version: '0.0.1' } });
}

/** Sends initialize (and notifications/initialized), asserting the answer; returns the session it opened. */
async function initialize(url: string, protocolVersion = '2025-06-18', capabilities: Record<string, unknown> = {}): Promise<{ session: Session; answer: Exchange }> {
  const answer = await exchange(url, 'POST', legacyHeaders(), initializeBody(protocolVersion, capabilities));
  assert.equal(answer.status, 200, answer.text.slice(0, 500));
  assert.ok(answer.body?.result, `an InitializeResult: ${answer.text.slice(0, 500)}`);
  const id = answer.headers.get('mcp-session-id');
  assert.ok(id, 'initialize is answered with an Mcp-Session-Id header');
  const session = { url, id, version: answer.body.result.protocolVersion as string };
  const initialized = await exchange(url, 'POST', legacyHeaders(session), { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(initialized.status, 202, initialized.text);
  return { session, answer };
}

function send(session: Session, method: string, params?: Record<string, unknown>): Promise<Exchange> {
  return exchange(session.url, 'POST', legacyHeaders(session), legacy(method, params));
}

/** Asserts a successful answer in 2025 form (no resultType, ttlMs, cacheScope); returns its result. */
function legacyResult(answer: Exchange): any {
  assert.equal(answer.status, 200, answer.text.slice(0, 500));
  assert.ok(answer.body?.result, `a result: ${answer.text.slice(0, 500)}`);
  for (const key of ['resultType', 'ttlMs', 'cacheScope']) assert.ok(!(key in answer.body.result), `no ${key} in a 2025 result: ${answer.text.slice(0, 500)}`);
  return answer.body.result;
}

/** A stream read as it arrives (a POST whose answer is SSE, or the GET stream). */
interface Stream {
  status: number;
  headers: Headers;
  messages: any[];
  /** Waits for a message matching `predicate` (seen already or arriving within `ms`). */
  next(predicate: (message: any) => boolean, ms?: number, what?: string): Promise<any>;
  close(): void;
}

async function openStream(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Stream> {
  const controller = new AbortController();
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: controller.signal });
  const messages: any[] = [];
  const type = response.headers.get('content-type') ?? '';
  let ended = false;
  void (async () => {
    try {
      if (!type.startsWith('text/event-stream')) {
        const text = await response.text();
        try {
          messages.push(JSON.parse(text));
        } catch {
          messages.push({ unparsed: text });
        }
        return;
      }
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.search(/\r?\n\r?\n/)) !== -1) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
          messages.push(...parseSse(event));
        }
      }
    } catch {
      // closed by the test
    } finally {
      ended = true;
    }
  })();
  return {
    status: response.status,
    headers: response.headers,
    messages,
    async next(predicate, ms = 10_000, what = 'a matching message') {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = messages.find(predicate);
        if (found) return found;
        if (ended || Date.now() > deadline) {
          throw new Error(`${what} did not arrive${ended ? ' (the stream ended)' : ''}; got: ${JSON.stringify(messages).slice(0, 1000)}`);
        }
        await sleep(10);
      }
    },
    close: () => controller.abort(),
  };
}

function openGetStream(session: Session): Promise<Stream> {
  return openStream(session.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': session.id, 'mcp-protocol-version': session.version });
}

/** One request as the gateway received it from a client (recorded by a fetch wrapper). */
interface Seen {
  method: string;
  path: string;
  /** The JSON-RPC method, or 'response' for a client's answer to a server request. */
  rpc?: string;
  modernMeta: boolean;
  params?: any;
  body?: any;
  sessionHeader: string | null;
  versionHeader: string | null;
  status: number;
  /** The Mcp-Session-Id the gateway answered with. */
  sessionAnswered: string | null;
}

function recordingFetch(log: Seen[]) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const headers = new Headers(init?.headers);
    let body: any;
    if (typeof init?.body === 'string') {
      try {
        body = JSON.parse(init.body);
      } catch {
        body = init.body;
      }
    }
    const response = await fetch(input, init);
    const message = Array.isArray(body) ? undefined : body;
    log.push({
      method: init?.method ?? 'GET',
      path: url.pathname,
      rpc: message ? (typeof message.method === 'string' ? message.method : 'result' in message || 'error' in message ? 'response' : undefined) : undefined,
      modernMeta: message?.params?._meta?.[PROTOCOL_META] !== undefined,
      params: message?.params,
      body,
      sessionHeader: headers.get('mcp-session-id'),
      versionHeader: headers.get('mcp-protocol-version'),
      status: response.status,
      sessionAnswered: response.headers.get('mcp-session-id'),
    });
    return response;
  };
}

function describeLog(log: Seen[]): string {
  return log.map((s) => `${s.method} ${s.path} ${s.rpc ?? ''} → ${s.status}${s.sessionHeader ? ' [session]' : ''}${s.modernMeta ? ' [modern _meta]' : ''}`).join('\n');
}

/** Asserts the recorded traffic of a legacy client: initialize without modern _meta, then the session everywhere. */
function assertLegacyTraffic(log: Seen[], version: string): string {
  const init = log.find((s) => s.rpc === 'initialize');
  assert.ok(init, `the client sent initialize:\n${describeLog(log)}`);
  assert.equal(init.status, 200, describeLog(log));
  assert.equal(init.params?.protocolVersion, version);
  const session = init.sessionAnswered;
  assert.ok(session, 'the gateway answered initialize with an Mcp-Session-Id');
  for (const s of log) {
    assert.equal(s.modernMeta, false, `no modern _meta from a legacy client:\n${describeLog(log)}`);
    if (s !== init) assert.equal(s.sessionHeader, session, `every later request carries the session:\n${describeLog(log)}`);
    if (s.method === 'POST') assert.ok(s.status === 200 || s.status === 202, `POST ${s.rpc} answered ${s.status}:\n${describeLog(log)}`);
  }
  return session;
}

/**
 * Asserts the elicitation travelled as a real server→client request: the client POSTed a JSON-RPC response
 * with the session (202), and never retried a call with inputResponses/requestState itself.
 */
function assertElicitedLegacyStyle(log: Seen[], session: string): void {
  const answers = log.filter((s) => s.rpc === 'response');
  assert.equal(answers.length, 1, `one answer to the gateway's elicitation/create:\n${describeLog(log)}`);
  assert.equal(answers[0]!.method, 'POST');
  assert.equal(answers[0]!.sessionHeader, session);
  assert.equal(answers[0]!.status, 202, describeLog(log));
  assert.deepEqual(answers[0]!.body.result, ELICIT_OK);
  for (const s of log) {
    assert.ok(!s.params || !('inputResponses' in s.params || 'requestState' in s.params), `no MRTR retry from a legacy client:\n${describeLog(log)}`);
  }
}

async function listAllTools1(client: Client1): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return names;
}

/** Swaps one character in the middle of a token for another base64url character. */
function tamper(token: string): string {
  for (let i = Math.floor(token.length / 2); i < token.length; i++) {
    const c = token[i]!;
    if (/[A-Za-z0-9]/.test(c)) return token.slice(0, i) + (c === 'A' ? 'B' : 'A') + token.slice(i + 1);
  }
  throw new Error(`no character to tamper with in ${token}`);
}

async function assertSessionGone(session: Session, why: string): Promise<void> {
  const call = await send(session, 'tools/list');
  assert.equal(call.status, 404, `${why}: POST → ${call.status} ${call.text.slice(0, 300)}`);
  const get = await exchange(session.url, 'GET', { accept: 'text/event-stream', 'mcp-session-id': session.id, 'mcp-protocol-version': session.version });
  assert.equal(get.status, 404, `${why}: GET → ${get.status}`);
}

// ---- the gateway most tests share --------------------------------------------------------------------------

let gateway: RunningGateway;
before(async () => {
  gateway = await startTestGateway({ modern: fixture('modern-server'), mrtr, everything });
});
after(() => gateway?.close());

// ---- SDK 1.x ------------------------------------------------------------------------------------------------

describe('SDK 1.x client (2025-11-25) through the gateway', () => {
  async function connect(url: string, asked: any[], log: Seen[]) {
    const client = new Client1({ name: 'sdk1-e2e', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return ELICIT_OK;
    });
    const transport = new Transport1(new URL(url), { fetch: recordingFetch(log) });
    await client.connect(transport);
    return { client, transport };
  }

  for (const route of ROUTES) {
    test(`${route.endpoint}: list and call tools, with progress`, { timeout: 60_000 }, async () => {
      const log: Seen[] = [];
      const { client, transport } = await connect(`${gateway.url}${route.endpoint}`, [], log);
      try {
        assert.equal(transport.protocolVersion, '2025-11-25');
        assert.ok(transport.sessionId, 'the transport holds the session id');
        assert.equal(typeof client.getServerVersion()?.name, 'string');
        assert.ok(client.getServerCapabilities()?.tools, 'the gateway announces tools');

        const names = await listAllTools1(client);
        for (const name of [route.echo, route.progress]) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
        if (route.endpoint === '/mcp') assert.ok(names.includes('everything__echo') && names.includes(route.confirm), names.join(', '));

        const echoed = await client.callTool({ name: route.echo, arguments: { text: 'héllo, 2025' } });
        assert.deepEqual(echoed.content, [{ type: 'text', text: 'héllo, 2025' }]);
        assert.ok(!('resultType' in echoed), JSON.stringify(echoed));

        const seen: number[] = [];
        const progressed = await client.callTool({ name: route.progress, arguments: { steps: 4 } }, undefined, { onprogress: (p) => void seen.push(p.progress) });
        assert.deepEqual(seen, [1, 2, 3, 4]);
        assert.deepEqual(progressed.content, [{ type: 'text', text: 'progressed 4' }]);

        if (route.endpoint === '/mcp') {
          // A 2025 client onto a 2025 upstream, through the modern core in between.
          const legacyToLegacy = await client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } });
          assert.deepEqual(legacyToLegacy.content, [{ type: 'text', text: 'Echo: hi' }]);
        }
        assertLegacyTraffic(log, '2025-11-25');
      } finally {
        await client.close();
      }
    });

    test(`${route.endpoint}: elicitation from a modern upstream arrives as elicitation/create`, { timeout: 60_000 }, async () => {
      const log: Seen[] = [];
      const asked: any[] = [];
      const { client } = await connect(`${gateway.url}${route.elicitEndpoint}`, asked, log);
      try {
        const result = await client.callTool({ name: route.confirm, arguments: { env: 'prod' } });
        assert.equal(textOf(result), CONFIRMED);
        assert.equal(asked.length, 1);
        assert.equal(asked[0].message, 'Deploy to prod?');
        assert.deepEqual(asked[0].requestedSchema?.required, ['ok']);
        assertElicitedLegacyStyle(log, assertLegacyTraffic(log, '2025-11-25'));
      } finally {
        await client.close();
      }
    });
  }

  test('the GET stream opens, and terminateSession (DELETE) ends the session', { timeout: 60_000 }, async () => {
    const log: Seen[] = [];
    const { client, transport } = await connect(`${gateway.url}/servers/modern/mcp`, [], log);
    let session: Session | undefined;
    try {
      await client.listTools();
      session = { url: `${gateway.url}/servers/modern/mcp`, id: transport.sessionId!, version: transport.protocolVersion! };
      // The SDK opens the GET stream on its own after initialization.
      const deadline = Date.now() + 5_000;
      while (!log.some((s) => s.method === 'GET') && Date.now() < deadline) await sleep(20);
      const get = log.find((s) => s.method === 'GET');
      assert.ok(get, `the SDK opened a GET stream:\n${describeLog(log)}`);
      assert.equal(get.status, 200, describeLog(log));
      assert.equal(get.sessionHeader, session.id);

      await transport.terminateSession();
      const del = log.find((s) => s.method === 'DELETE');
      assert.ok(del, describeLog(log));
      assert.ok(del.status >= 200 && del.status < 300, `DELETE → ${del.status}`);
    } finally {
      await client.close();
    }
    assert.ok(session);
    await assertSessionGone(session, 'after DELETE');
  });
});

// ---- SDK v2, legacy mode ---------------------------------------------------------------------------------

describe('SDK v2 client in legacy mode (2025-06-18) through the gateway', () => {
  async function connect(url: string, asked: any[], log: Seen[]) {
    const client = new Client2(
      { name: 'sdk2-legacy-e2e', version: '1.0.0' },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'legacy' }, supportedProtocolVersions: ['2025-06-18'] },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params);
      return ELICIT_OK;
    });
    const transport = new Transport2(new URL(url), { fetch: recordingFetch(log) });
    await client.connect(transport);
    return { client, transport };
  }

  for (const route of ROUTES) {
    test(`${route.endpoint}: list and call tools, with progress`, { timeout: 60_000 }, async () => {
      const log: Seen[] = [];
      const { client, transport } = await connect(`${gateway.url}${route.endpoint}`, [], log);
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), '2025-06-18');
        assert.equal(client.getProtocolEra(), 'legacy');
        assert.ok(transport.sessionId, 'the transport holds the session id');

        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        for (const name of [route.echo, route.progress]) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);

        const echoed = await client.callTool({ name: route.echo, arguments: { text: 'héllo, 2025' } });
        assert.deepEqual(echoed.content, [{ type: 'text', text: 'héllo, 2025' }]);

        const seen: number[] = [];
        const progressed = await client.callTool({ name: route.progress, arguments: { steps: 3 } }, { onprogress: (p) => void seen.push(p.progress) });
        assert.deepEqual(seen, [1, 2, 3]);
        assert.deepEqual(progressed.content, [{ type: 'text', text: 'progressed 3' }]);

        const session = assertLegacyTraffic(log, '2025-06-18');
        for (const s of log.filter((s) => s.rpc !== 'initialize' && s.method === 'POST')) assert.equal(s.versionHeader, '2025-06-18', describeLog(log));
        assert.equal(session, transport.sessionId);
      } finally {
        await client.close();
      }
    });

    test(`${route.endpoint}: elicitation from a modern upstream arrives as elicitation/create`, { timeout: 60_000 }, async () => {
      const log: Seen[] = [];
      const asked: any[] = [];
      const { client } = await connect(`${gateway.url}${route.elicitEndpoint}`, asked, log);
      try {
        const result = await client.callTool({ name: route.confirm, arguments: { env: 'staging' } });
        assert.equal(textOf(result), CONFIRMED);
        assert.equal(asked.length, 1);
        assert.equal(asked[0].message, 'Deploy to staging?');
        assertElicitedLegacyStyle(log, assertLegacyTraffic(log, '2025-06-18'));
      } finally {
        await client.close();
      }
    });
  }
});

// ---- SDK v2, auto mode -----------------------------------------------------------------------------------

describe('SDK v2 client in auto mode picks the modern era', () => {
  for (const route of ROUTES) {
    test(`${route.endpoint}: 2026-07-28 via server/discover, no initialize, no session`, { timeout: 60_000 }, async () => {
      const log: Seen[] = [];
      const asked: any[] = [];
      const client = new Client2({ name: 'sdk2-auto-e2e', version: '1.0.0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params);
        return ELICIT_OK;
      });
      await client.connect(new Transport2(new URL(`${gateway.url}${route.endpoint}`), { fetch: recordingFetch(log) }));
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), VERSION);
        assert.equal(client.getProtocolEra(), 'modern');

        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === route.echo));
        const echoed = await client.callTool({ name: route.echo, arguments: { text: 'modern' } });
        assert.deepEqual(echoed.content, [{ type: 'text', text: 'modern' }]);
        if (route.endpoint === '/mcp') {
          const confirmed = await client.callTool({ name: route.confirm, arguments: { env: 'dev' } });
          assert.equal(textOf(confirmed), CONFIRMED);
          assert.equal(asked.length, 1);
        }

        const posts = log.filter((s) => s.method === 'POST');
        assert.equal(posts[0]?.rpc, 'server/discover', describeLog(log));
        assert.ok(!log.some((s) => s.rpc === 'initialize'), `no initialize:\n${describeLog(log)}`);
        assert.ok(!log.some((s) => s.sessionAnswered !== null), `no Mcp-Session-Id from the gateway:\n${describeLog(log)}`);
        assert.ok(!log.some((s) => s.rpc === 'response'), `no server→client request on the modern era:\n${describeLog(log)}`);
        for (const s of posts.filter((s) => s.rpc && s.rpc !== 'response' && !s.rpc.startsWith('notifications/'))) {
          assert.equal(s.modernMeta, true, `${s.rpc} carries the modern _meta:\n${describeLog(log)}`);
          assert.equal(s.versionHeader, VERSION);
        }
        if (route.endpoint === '/mcp')
          assert.ok(
            log.some((s) => s.params && 'inputResponses' in s.params),
            `the MRTR retry:\n${describeLog(log)}`,
          );
      } finally {
        await client.close();
      }
    });
  }
});

// ---- raw HTTP ---------------------------------------------------------------------------------------------

describe('raw 2025 HTTP', () => {
  test('initialize negotiates a 2025 version and answers with an opaque Mcp-Session-Id', { timeout: 30_000 }, async () => {
    for (const endpoint of ['/servers/modern/mcp', '/mcp']) {
      const url = `${gateway.url}${endpoint}`;
      for (const [asked, expected] of [...LEGACY_VERSIONS.map((v) => [v, v]), ['2024-11-05', '2025-11-25'], ['2099-01-01', '2025-11-25']] as const) {
        const answer = await exchange(url, 'POST', legacyHeaders(), initializeBody(asked));
        const result = legacyResult(answer);
        assert.equal(result.protocolVersion, expected, `${endpoint} asked ${asked}`);
        assert.equal(typeof result.capabilities, 'object');
        assert.ok(result.capabilities.tools, `${endpoint}: tools among ${JSON.stringify(result.capabilities)}`);
        assert.equal(typeof result.serverInfo?.name, 'string');
        assert.equal(typeof result.serverInfo?.version, 'string');
        assert.equal(answer.body.jsonrpc, '2.0');
        const id = answer.headers.get('mcp-session-id');
        assert.ok(id, `${endpoint}: Mcp-Session-Id header`);
        assert.match(id, /^[\x21-\x7e]+$/, 'visible ASCII only, as the 2025 transport requires');
      }
    }
    // Opaque: encrypted, so nothing of the session reads through, and never the same twice.
    const first = (await initialize(`${gateway.url}/servers/modern/mcp`, '2025-06-18')).session.id;
    const second = (await initialize(`${gateway.url}/servers/modern/mcp`, '2025-06-18')).session.id;
    assert.notEqual(first, second);
    for (const part of first.split(/[.~:_]/)) {
      for (const decoded of [part, Buffer.from(part, 'base64url').toString('latin1'), Buffer.from(part, 'base64').toString('latin1')]) {
        for (const secret of ['2025-06-18', 'modern', 'raw-2025-client', '/servers/']) assert.ok(!decoded.includes(secret), `${secret} readable in the session id ${first}`);
      }
    }
  });

  test('list, call, read and get answer in 2025 form; ping, logging/setLevel, subscribe and unsubscribe are answered', { timeout: 30_000 }, async () => {
    const { session } = await initialize(`${gateway.url}/servers/modern/mcp`, '2025-11-25');
    const tools = legacyResult(await send(session, 'tools/list'));
    assert.ok(Array.isArray(tools.tools) && tools.tools.some((t: { name: string }) => t.name === 'echo'), JSON.stringify(tools).slice(0, 300));

    const call = legacyResult(await send(session, 'tools/call', { name: 'echo', arguments: { text: 'raw' } }));
    assert.deepEqual(call.content, [{ type: 'text', text: 'raw' }]);

    for (const method of ['prompts/list', 'resources/list', 'resources/templates/list']) legacyResult(await send(session, method));
    const read = legacyResult(await send(session, 'resources/read', { uri: 'fixture://hello' }));
    assert.equal(read.contents[0].text, 'hello world');
    const prompt = legacyResult(await send(session, 'prompts/get', { name: 'greet', arguments: { name: 'Ada' } }));
    assert.deepEqual(prompt.messages[0].content, { type: 'text', text: 'Hello, Ada!' });

    const ping = legacyResult(await send(session, 'ping'));
    assert.deepEqual(
      Object.keys(ping).filter((k) => k !== '_meta'),
      [],
      JSON.stringify(ping),
    );
    legacyResult(await send(session, 'logging/setLevel', { level: 'warning' }));
    legacyResult(await send(session, 'resources/subscribe', { uri: 'fixture://hello' }));
    legacyResult(await send(session, 'resources/unsubscribe', { uri: 'fixture://hello' }));

    // The same on the aggregate endpoint, with its public names.
    const { session: aggregate } = await initialize(`${gateway.url}/mcp`, '2025-03-26');
    const all = legacyResult(await send(aggregate, 'tools/list'));
    const names = all.tools.map((t: { name: string }) => t.name);
    for (const name of ['modern__echo', 'mrtr__confirm', 'everything__echo']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    assert.deepEqual(legacyResult(await send(aggregate, 'tools/call', { name: 'modern__echo', arguments: { text: 'via /mcp' } })).content, [{ type: 'text', text: 'via /mcp' }]);
    legacyResult(await send(aggregate, 'ping'));
  });

  test("progress reaches a legacy client on the POST's SSE stream, before the result", { timeout: 30_000 }, async () => {
    for (const [endpoint, name] of [
      ['/servers/modern/mcp', 'progress'],
      ['/mcp', 'modern__progress'],
    ] as const) {
      const { session } = await initialize(`${gateway.url}${endpoint}`);
      const answer = await exchange(session.url, 'POST', legacyHeaders(session), legacy('tools/call', { name, arguments: { steps: 3 }, _meta: { progressToken: 'tok-1' } }));
      assert.equal(answer.headers.get('content-type')?.startsWith('text/event-stream'), true, answer.text.slice(0, 300));
      const progress = answer.messages.filter((m) => m.method === 'notifications/progress');
      assert.deepEqual(
        progress.map((m) => [m.params.progressToken, m.params.progress]),
        [
          ['tok-1', 1],
          ['tok-1', 2],
          ['tok-1', 3],
        ],
        endpoint,
      );
      assert.equal(answer.messages.at(-1), answer.body, 'the result comes last');
      assert.equal(textOf(legacyResult(answer)), 'progressed 3');
    }
  });

  test("elicitation round trip: elicitation/create on the POST's stream, the answer POSTed back feeds the retry", { timeout: 30_000 }, async () => {
    for (const [endpoint, name] of [
      ['/servers/mrtr/mcp', 'confirm'],
      ['/mcp', 'mrtr__confirm'],
    ] as const) {
      const { session } = await initialize(`${gateway.url}${endpoint}`, '2025-11-25', { elicitation: {} });
      const callId = `call-${endpoint}`;
      const stream = await openStream(session.url, 'POST', legacyHeaders(session), legacy('tools/call', { name, arguments: { env: 'prod' } }, callId));
      try {
        assert.equal(stream.status, 200);
        assert.equal(stream.headers.get('content-type')?.startsWith('text/event-stream'), true, `${endpoint}: an SSE answer`);
        const ask = await stream.next((m) => m.method === 'elicitation/create', 10_000, `${endpoint}: elicitation/create`);
        assert.ok(ask.id !== undefined && ask.id !== null, 'a request, with an id');
        assert.notEqual(ask.id, callId);
        assert.equal(ask.params.message, 'Deploy to prod?');
        assert.deepEqual(ask.params.requestedSchema.required, ['ok']);
        assert.ok(!stream.messages.some((m) => m.id === callId), 'no result before the answer');

        const answered = await exchange(session.url, 'POST', legacyHeaders(session), { jsonrpc: '2.0', id: ask.id, result: ELICIT_OK });
        assert.equal(answered.status, 202, answered.text);

        const final = await stream.next((m) => m.id === callId, 10_000, `${endpoint}: the call's result`);
        const result = legacyResult({ status: 200, headers: stream.headers, body: final, messages: [final], text: JSON.stringify(final) });
        assert.equal(textOf(result), CONFIRMED);
        assert.ok(!('inputRequests' in result) && !('requestState' in result), JSON.stringify(result));
      } finally {
        stream.close();
      }
    }
  });

  test('the GET stream carries list_changed and resource updates', { timeout: 30_000 }, async () => {
    const { session } = await initialize(`${gateway.url}/servers/modern/mcp`, '2025-11-25');
    const get = await openGetStream(session);
    try {
      assert.equal(get.status, 200);
      assert.equal(get.headers.get('content-type')?.startsWith('text/event-stream'), true);
      legacyResult(await send(session, 'resources/subscribe', { uri: 'fixture://hello' }));

      // The upstream subscription may take a moment to be in place: touch until the update arrives.
      const deadline = Date.now() + 10_000;
      while (!get.messages.some((m) => m.method === 'notifications/resources/updated') && Date.now() < deadline) {
        legacyResult(await send(session, 'tools/call', { name: 'touch', arguments: { uri: 'fixture://hello' } }));
        await sleep(200);
      }
      const updated = await get.next((m) => m.method === 'notifications/resources/updated', 0, 'notifications/resources/updated');
      assert.equal(updated.params.uri, 'fixture://hello');
      assert.ok(!('id' in updated), 'a notification');

      legacyResult(await send(session, 'tools/call', { name: 'add-tool', arguments: {} }));
      await get.next((m) => m.method === 'notifications/tools/list_changed', 10_000, 'notifications/tools/list_changed');
      const tools = legacyResult(await send(session, 'tools/list'));
      assert.ok(
        tools.tools.some((t: { name: string }) => t.name.startsWith('added-')),
        'the new list has the added tool',
      );
    } finally {
      get.close();
    }
  });

  test('DELETE ends the session: then 404 for POST, GET and DELETE', { timeout: 30_000 }, async () => {
    const { session } = await initialize(`${gateway.url}/servers/modern/mcp`);
    legacyResult(await send(session, 'tools/list'));
    const del = await exchange(session.url, 'DELETE', { 'mcp-session-id': session.id, 'mcp-protocol-version': session.version });
    assert.ok(del.status >= 200 && del.status < 300, `DELETE → ${del.status} ${del.text}`);
    await assertSessionGone(session, 'after DELETE');
    const again = await exchange(session.url, 'DELETE', { 'mcp-session-id': session.id, 'mcp-protocol-version': session.version });
    assert.equal(again.status, 404);
    // A new initialize opens a new session.
    const fresh = await initialize(session.url);
    legacyResult(await send(fresh.session, 'ping'));
  });

  test('an unknown or tampered session id → 404', { timeout: 30_000 }, async () => {
    const { session } = await initialize(`${gateway.url}/servers/modern/mcp`);
    legacyResult(await send(session, 'ping'));
    const tampered = { ...session, id: tamper(session.id) };
    assert.notEqual(tampered.id, session.id);
    await assertSessionGone(tampered, 'tampered');
    await assertSessionGone({ ...session, id: session.id.slice(0, -4) }, 'truncated');
    await assertSessionGone({ ...session, id: 'not-a-session' }, 'unknown');
    await assertSessionGone({ ...session, id: `${session.id}AAAA` }, 'extended');
    // The genuine one still works.
    legacyResult(await send(session, 'ping'));
  });

  test('a batch → -32600, legacy or mixed', { timeout: 30_000 }, async () => {
    const url = `${gateway.url}/servers/modern/mcp`;
    const plain = await exchange(url, 'POST', legacyHeaders(), [initializeBody('2025-06-18')]);
    assert.equal(plain.body?.error?.code, -32600, plain.text);
    assert.equal(plain.headers.get('mcp-session-id'), null);
    const { session } = await initialize(url);
    const mixed = await exchange(url, 'POST', legacyHeaders(session), [legacy('ping'), request('tools/list')]);
    assert.equal(mixed.body?.error?.code, -32600, mixed.text);
    const legacyOnly = await exchange(url, 'POST', legacyHeaders(session), [legacy('ping'), legacy('tools/list')]);
    assert.equal(legacyOnly.body?.error?.code, -32600, legacyOnly.text);
  });
});

// ---- modern requests on the same endpoints -------------------------------------------------------------

describe('modern requests are served as before, whatever session headers they carry', () => {
  test('tools/list and tools/call with a live, an ended or a made-up Mcp-Session-Id', { timeout: 30_000 }, async () => {
    const url = `${gateway.url}/servers/modern/mcp`;
    const { session: live } = await initialize(url);
    const { session: ended } = await initialize(url);
    await exchange(url, 'DELETE', { 'mcp-session-id': ended.id, 'mcp-protocol-version': ended.version });
    for (const sessionId of [undefined, live.id, ended.id, 'not-a-session']) {
      const extra: Record<string, string> = sessionId ? { 'mcp-session-id': sessionId } : {};
      const list = request('tools/list');
      const listed = await post(url, list, { ...headersFor(list), ...extra });
      assert.equal(listed.status, 200, `${sessionId}: ${JSON.stringify(listed.body).slice(0, 300)}`);
      assert.ok(listed.body.result.tools.some((t: { name: string }) => t.name === 'echo'));
      assert.equal(listed.headers.get('mcp-session-id'), null);

      const call = request('tools/call', { name: 'echo', arguments: { text: 'modern' } });
      const called = await post(url, call, { ...headersFor(call), ...extra });
      assert.equal(called.status, 200, `${sessionId}: ${JSON.stringify(called.body).slice(0, 300)}`);
      assert.equal(called.body.result.resultType, 'complete');
      assert.deepEqual(called.body.result.content, [{ type: 'text', text: 'modern' }]);
      assert.equal(called.headers.get('mcp-session-id'), null);
    }
    // The legacy session is untouched by modern traffic that carried it.
    legacyResult(await send(live, 'ping'));
  });

  test('server/discover on /mcp stays modern; an initialize carrying modern _meta is refused as before', { timeout: 30_000 }, async () => {
    const url = `${gateway.url}/mcp`;
    const discover = request('server/discover');
    const discovered = await post(url, discover);
    assert.equal(discovered.status, 200);
    assert.ok(discovered.body.result.supportedVersions.includes(VERSION));
    assert.equal(discovered.headers.get('mcp-session-id'), null);

    const init = {
      jsonrpc: '2.0',
      id: 'modern-init',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'confused', version: '1' }, _meta: META },
    };
    const refused = await post(url, init, headersFor(init));
    assert.equal(refused.status, 404);
    assert.equal(refused.body.error.code, -32601);
    assert.equal(refused.headers.get('mcp-session-id'), null);
  });
});

// ---- sessions across gateway instances ---------------------------------------------------------------

describe('a session id carries its own state: any instance with the same secret serves it', () => {
  let minting: RunningGateway;
  let sameSecret: RunningGateway;
  let otherSecret: RunningGateway;
  before(async () => {
    [minting, sameSecret, otherSecret] = await Promise.all([
      startTestGateway({ modern: fixture('modern-server') }, {}, { legacyClients: { sessionSecret: SECRET } }),
      startTestGateway({ modern: fixture('modern-server') }, {}, { legacyClients: { sessionSecret: SECRET } }),
      startTestGateway({ modern: fixture('modern-server') }, {}, { legacyClients: { sessionSecret: OTHER_SECRET } }),
    ]);
  });
  after(async () => {
    await Promise.all([minting?.close(), sameSecret?.close(), otherSecret?.close()]);
  });

  test('accepted by a second gateway with the same legacyClients.sessionSecret, refused by others', { timeout: 30_000 }, async () => {
    const { session } = await initialize(`${minting.url}/servers/modern/mcp`, '2025-06-18');
    legacyResult(await send(session, 'tools/list'));

    const there = { ...session, url: `${sameSecret.url}/servers/modern/mcp` };
    const tools = legacyResult(await send(there, 'tools/list'));
    assert.ok(tools.tools.some((t: { name: string }) => t.name === 'echo'));
    assert.deepEqual(legacyResult(await send(there, 'tools/call', { name: 'echo', arguments: { text: 'replica' } })).content, [{ type: 'text', text: 'replica' }]);
    legacyResult(await send(there, 'ping'));

    await assertSessionGone({ ...session, url: `${otherSecret.url}/servers/modern/mcp` }, 'another secret');
    await assertSessionGone({ ...session, url: `${gateway.url}/servers/modern/mcp` }, 'a random secret');
    await assertSessionGone({ ...there, id: tamper(session.id) }, 'tampered, on the second instance');
  });
});

describe('sessions expire after legacyClients.sessionTtlMs', () => {
  let short: RunningGateway;
  before(async () => {
    short = await startTestGateway({ modern: fixture('modern-server') }, {}, { legacyClients: { sessionTtlMs: 300 } });
  });
  after(() => short?.close());

  test('served at once, 404 once expired', { timeout: 30_000 }, async () => {
    const { session } = await initialize(`${short.url}/servers/modern/mcp`);
    legacyResult(await send(session, 'tools/list'));
    await sleep(700);
    await assertSessionGone(session, 'expired');
    // A new initialize opens a new session.
    const { session: again } = await initialize(session.url);
    assert.notEqual(again.id, session.id);
    legacyResult(await send(again, 'ping'));
  });
});
