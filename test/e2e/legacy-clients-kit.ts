// What the legacy-clients-*.test.ts files share: raw 2025 HTTP (initialize, Mcp-Session-Id, SSE streams),
// a fetch wrapper that records what a client sends and receives, assertions on 2025-era traffic, and the
// gateway most of their tests share (a modern upstream, an MRTR upstream and server-everything).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, ROOT, startTestGateway, everything, textOf } from './harness.js';
import { eachSseMessage, sseTextMessages } from '../sse.js';
import { after, before } from 'node:test';
import { compiledFixture } from '../compiled-fixtures.js';

// ---- plumbing ---------------------------------------------------------------------------------------------

export const SECRET = 'legacy-clients-e2e-secret-0123456789abcdef';
export const OTHER_SECRET = 'another-legacy-clients-secret-fedcba9876543210';
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];
export const PROTOCOL_META = 'io.modelcontextprotocol/protocolVersion';
/** The modern SDK v2 server that asks for input through input_required (elicitation under the key "confirm"). */
export const mrtr = { command: process.execPath, args: [compiledFixture('mrtr-server')], cwd: ROOT };
export const ELICIT_OK = { action: 'accept' as const, content: { ok: true } };
export const CONFIRMED = 'answer={"ok":true} stateIntact=true';

/** Per endpoint: the names a client uses there. */
export const ROUTES = [
  {
    endpoint: '/servers/modern/mcp',
    echo: 'echo',
    progress: 'progress',
    elicitEndpoint: '/servers/mrtr/mcp',
    confirm: 'confirm',
  },
  {
    endpoint: '/mcp',
    echo: 'modern__echo',
    progress: 'modern__progress',
    elicitEndpoint: '/mcp',
    confirm: 'mrtr__confirm',
  },
] as const;

export interface Exchange {
  status: number;
  headers: Headers;
  /** The JSON-RPC response (the last message carrying a result or an error), if any. */
  body: any;
  /** Every JSON message of the answer in order (one for a JSON answer). */
  messages: any[];
  text: string;
}

/** One HTTP exchange, read to the end; never throws on a status or a body that is not JSON. */
export async function exchange(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Exchange> {
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  let messages: any[] = [];
  if (type.startsWith('text/event-stream')) messages = sseTextMessages(text);
  else if (text) {
    try {
      messages = [JSON.parse(text)];
    } catch {
      // not JSON: the status says it all
    }
  }
  const found = [...messages].reverse().find((m) => m && typeof m === 'object' && ('result' in m || 'error' in m));
  return {
    status: response.status,
    headers: response.headers,
    body: found ?? (Array.isArray(messages[0]) ? messages[0] : undefined),
    messages,
    text,
  };
}

export interface Session {
  url: string;
  id: string;
  version: string;
}

/** What a 2025 Streamable HTTP client sends: no Mcp-Method, no modern _meta; the session's headers once it has one. */
export function legacyHeaders(session?: Session): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (session) {
    headers['mcp-session-id'] = session.id;
    headers['mcp-protocol-version'] = session.version;
  }
  return headers;
}

export let nextLegacyId = 1;
/** A 2025-style request: params (if any) without the modern _meta keys. */
export function legacy(
  method: string,
  params?: Record<string, unknown>,
  id: string | number = `legacy-${nextLegacyId++}`,
) {
  return { jsonrpc: '2.0' as const, id, method, ...(params === undefined ? {} : { params }) };
}

export function initializeBody(protocolVersion: string, capabilities: Record<string, unknown> = {}) {
  return legacy('initialize', {
    protocolVersion,
    capabilities,
    clientInfo: { name: 'raw-2025-client', version: '0.0.1' },
  });
}

/** Sends initialize (and notifications/initialized), asserting the answer; returns the session it opened. */
export async function initialize(
  url: string,
  protocolVersion = '2025-06-18',
  capabilities: Record<string, unknown> = {},
): Promise<{ session: Session; answer: Exchange }> {
  const answer = await exchange(url, 'POST', legacyHeaders(), initializeBody(protocolVersion, capabilities));
  assert.equal(answer.status, 200, answer.text.slice(0, 500));
  assert.ok(answer.body?.result, `an InitializeResult: ${answer.text.slice(0, 500)}`);
  const id = answer.headers.get('mcp-session-id');
  assert.ok(id, 'initialize is answered with an Mcp-Session-Id header');
  const session = { url, id, version: answer.body.result.protocolVersion as string };
  const initialized = await exchange(url, 'POST', legacyHeaders(session), {
    jsonrpc: '2.0',
    method: 'notifications/initialized',
  });
  assert.equal(initialized.status, 202, initialized.text);
  return { session, answer };
}

export function send(session: Session, method: string, params?: Record<string, unknown>): Promise<Exchange> {
  return exchange(session.url, 'POST', legacyHeaders(session), legacy(method, params));
}

/** Asserts a successful answer in 2025 form (no resultType, ttlMs, cacheScope); returns its result. */
export function legacyResult(answer: Exchange): any {
  assert.equal(answer.status, 200, answer.text.slice(0, 500));
  assert.ok(answer.body?.result, `a result: ${answer.text.slice(0, 500)}`);
  for (const key of ['resultType', 'ttlMs', 'cacheScope'])
    assert.ok(!(key in answer.body.result), `no ${key} in a 2025 result: ${answer.text.slice(0, 500)}`);
  return answer.body.result;
}

/** A stream read as it arrives (a POST whose answer is SSE, or the GET stream). */
export interface Stream {
  status: number;
  headers: Headers;
  messages: any[];
  /** Waits for a message matching `predicate` (seen already or arriving within `ms`). */
  next(predicate: (message: any) => boolean, ms?: number, what?: string): Promise<any>;
  close(): void;
}

export async function openStream(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Stream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: controller.signal,
  });
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
      await eachSseMessage(response.body!, (message) => messages.push(message));
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
          throw new Error(
            `${what} did not arrive${ended ? ' (the stream ended)' : ''}; got: ` +
              `${JSON.stringify(messages).slice(0, 1000)}`,
          );
        }
        await sleep(10);
      }
    },
    close: () => controller.abort(),
  };
}

export function openGetStream(session: Session): Promise<Stream> {
  return openStream(session.url, 'GET', {
    accept: 'text/event-stream',
    'mcp-session-id': session.id,
    'mcp-protocol-version': session.version,
  });
}

/** One request as the gateway received it from a client (recorded by a fetch wrapper). */
export interface Seen {
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

export function recordingFetch(log: Seen[]) {
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
      rpc: message
        ? typeof message.method === 'string'
          ? message.method
          : 'result' in message || 'error' in message
            ? 'response'
            : undefined
        : undefined,
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

export function describeLog(log: Seen[]): string {
  return log
    .map(
      (s) =>
        `${s.method} ${s.path} ${s.rpc ?? ''} → ` +
        `${s.status}${s.sessionHeader ? ' [session]' : ''}${s.modernMeta ? ' [modern _meta]' : ''}`,
    )
    .join('\n');
}

/** Asserts the recorded traffic of a legacy client: initialize without modern _meta, then the session everywhere. */
export function assertLegacyTraffic(log: Seen[], version: string): string {
  const init = log.find((s) => s.rpc === 'initialize');
  assert.ok(init, `the client sent initialize:\n${describeLog(log)}`);
  assert.equal(init.status, 200, describeLog(log));
  assert.equal(init.params?.protocolVersion, version);
  const session = init.sessionAnswered;
  assert.ok(session, 'the gateway answered initialize with an Mcp-Session-Id');
  for (const s of log) {
    assert.equal(s.modernMeta, false, `no modern _meta from a legacy client:\n${describeLog(log)}`);
    if (s !== init)
      assert.equal(s.sessionHeader, session, `every later request carries the session:\n${describeLog(log)}`);
    if (s.method === 'POST')
      assert.ok(s.status === 200 || s.status === 202, `POST ${s.rpc} answered ${s.status}:\n${describeLog(log)}`);
  }
  return session;
}

/**
 * Asserts the elicitation travelled as a real server→client request: the client POSTed a JSON-RPC response
 * with the session (202), and never retried a call with inputResponses/requestState itself.
 */
export function assertElicitedLegacyStyle(log: Seen[], session: string): void {
  const answers = log.filter((s) => s.rpc === 'response');
  assert.equal(answers.length, 1, `one answer to the gateway's elicitation/create:\n${describeLog(log)}`);
  assert.equal(answers[0]!.method, 'POST');
  assert.equal(answers[0]!.sessionHeader, session);
  assert.equal(answers[0]!.status, 202, describeLog(log));
  assert.deepEqual(answers[0]!.body.result, ELICIT_OK);
  for (const s of log) {
    assert.ok(
      !s.params || !('inputResponses' in s.params || 'requestState' in s.params),
      `no MRTR retry from a legacy client:\n${describeLog(log)}`,
    );
  }
}

/** How a test file connects one SDK's 2025-era client, recording its traffic and what it was asked. */
export type LegacyConnect = (
  url: string,
  asked: any[],
  log: Seen[],
) => Promise<{
  client: {
    callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
    close(): Promise<void>;
  };
}>;

/**
 * A modern upstream's confirm tool called by a 2025-era client: the question reaches it once as
 * elicitation/create, legacy style, and the call completes with its answer. Returns the question asked.
 */
export async function confirmThroughElicitation(
  connect: LegacyConnect,
  url: string,
  tool: string,
  env: string,
  version: string,
): Promise<any> {
  const log: Seen[] = [];
  const asked: any[] = [];
  const { client } = await connect(url, asked, log);
  try {
    const result = await client.callTool({ name: tool, arguments: { env } });
    assert.equal(textOf(result), CONFIRMED);
    assert.equal(asked.length, 1);
    assert.equal(asked[0].message, `Deploy to ${env}?`);
    assertElicitedLegacyStyle(log, assertLegacyTraffic(log, version));
    return asked[0];
  } finally {
    await client.close();
  }
}

export async function listAllTools1(client: Client1): Promise<string[]> {
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
export function tamper(token: string): string {
  for (let i = Math.floor(token.length / 2); i < token.length; i++) {
    const c = token[i]!;
    if (/[A-Za-z0-9]/.test(c)) return token.slice(0, i) + (c === 'A' ? 'B' : 'A') + token.slice(i + 1);
  }
  throw new Error(`no character to tamper with in ${token}`);
}

export async function assertSessionGone(session: Session, why: string): Promise<void> {
  const call = await send(session, 'tools/list');
  assert.equal(call.status, 404, `${why}: POST → ${call.status} ${call.text.slice(0, 300)}`);
  const get = await exchange(session.url, 'GET', {
    accept: 'text/event-stream',
    'mcp-session-id': session.id,
    'mcp-protocol-version': session.version,
  });
  assert.equal(get.status, 404, `${why}: GET → ${get.status}`);
}

// ---- the gateway most tests share --------------------------------------------------------------------------

/** Starts the file's shared gateway before its tests and stops it after them. */
export function gatewayForThisFile(): { readonly url: string } {
  let gateway: RunningGateway | undefined;
  before(async () => {
    gateway = await startTestGateway({ modern: fixture('modern-server'), mrtr, everything });
  });
  after(() => gateway?.close());
  return {
    get url(): string {
      assert.ok(gateway, 'the shared gateway did not start');
      return gateway.url;
    },
  };
}
