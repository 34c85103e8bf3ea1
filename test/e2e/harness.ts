// Shared end-to-end plumbing: a gateway started in-process on a free loopback port with real stdio
// children, raw HTTP helpers, and a validator for every message the gateway emits.
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../infra/logger.js';
import { silentLog } from '../../infra/log.js';
import { defProblems as validate } from '../schema.js';
import { eachSseMessage, sseTextMessages } from '../sse.js';
import { eventually, until } from '../timing.js';

// The event waits live in test/timing.ts (a process can use them without loading the gateway); here for the e2e files.
export { eventually, until };
import { compiledFixture } from '../compiled-fixtures.js';

// The one SSE reader of the tests lives in test/sse.ts; e2e files take it from here with the rest.
export { eachSseMessage, sseTextMessages };

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const VERSION = '2026-07-28';
export const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A server entry running one of the TypeScript fixtures, compiled to JavaScript (test/compiled-fixtures.ts). */
export function fixture(
  name: 'modern-server' | 'legacy-server',
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { command: process.execPath, args: [compiledFixture(name)], cwd: ROOT, ...extra };
}

/**
 * A server entry running test/fixtures/recording-server.mjs, which appends every line it receives to `file`:
 * `id` names its tools' answers (SERVER_ID), `era: 'modern'` skips the probe, `env` adds to its environment.
 */
export function recordingServer(
  file: string,
  options: { id?: string; era?: 'modern'; env?: Record<string, string> } = {},
): Record<string, unknown> {
  return {
    command: process.execPath,
    args: ['test/fixtures/recording-server.mjs'],
    cwd: ROOT,
    ...(options.era && { era: options.era }),
    env: { RECORD_FILE: file, ...(options.id && { SERVER_ID: options.id }), ...options.env },
  };
}

export const everything = {
  command: process.execPath,
  args: ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'],
  cwd: ROOT,
};

export async function startTestGateway(
  servers: Record<string, unknown>,
  listen: Record<string, unknown> = {},
  rest: Record<string, unknown> = {},
): Promise<RunningGateway> {
  const config = parseConfig({ listen: { port: 0, ...listen }, servers, ...rest }, 'test', ROOT);
  const log = process.env.TEST_LOG ? createLogger(process.env.TEST_LOG) : silentLog;
  return startGateway(config, log);
}

export function modernClient(gateway: RunningGateway, server: string): Promise<Client> {
  const client = new Client(
    { name: 'e2e-client', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: VERSION } } },
  );
  return client
    .connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/servers/${server}/mcp`)))
    .then(() => client);
}

/** The headers a conforming client sends for this body. */
export function headersFor(body: { method: string; params?: Record<string, unknown> }): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': VERSION,
    'mcp-method': body.method,
  };
  const name =
    body.method === 'resources/read'
      ? body.params?.uri
      : body.method === 'tools/call' || body.method === 'prompts/get'
        ? body.params?.name
        : undefined;
  if (typeof name === 'string') headers['mcp-name'] = name;
  return headers;
}

let nextId = 1;
export function request(method: string, params: Record<string, unknown> = {}, id: string | number = nextId++) {
  return {
    jsonrpc: '2.0' as const,
    id,
    method,
    params: { ...params, _meta: { ...META, ...(params._meta as object | undefined) } },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  /** For SSE answers: every message in order, the response last. */
  events: any[];
}

export async function post(
  url: string,
  body: unknown,
  headers?: Record<string, string>,
  init: RequestInit = {},
): Promise<Answer> {
  const sent = headers ?? headersFor(body as { method: string });
  const response = await fetch(url, {
    method: 'POST',
    headers: sent,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
  const type = response.headers.get('content-type') ?? '';
  const text = await response.text();
  if (type.startsWith('text/event-stream')) {
    const events = sseTextMessages(text);
    return { status: response.status, headers: response.headers, body: events.at(-1), events };
  }
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, events: [] };
}

/** A JSON-RPC message as a test sends it (only the method is needed for its headers). */
export interface RpcBody {
  jsonrpc?: string;
  id?: string | number;
  method: string;
  params?: Record<string, unknown>;
}

/**
 * `post` with the headers a conforming client sends for `body`, and `extra` over them (credentials, a traceparent, a
 * header under test).
 */
export function send(url: string, body: RpcBody, extra: Record<string, string> = {}): Promise<Answer> {
  return post(url, body, { ...headersFor(body), ...extra });
}

// ---- schema validation of what the gateway emits ------------------------------------------------

const RESULT_DEF: Record<string, string> = {
  'server/discover': 'DiscoverResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
  'resources/list': 'ListResourcesResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'resources/read': 'ReadResourceResult',
  'completion/complete': 'CompleteResult',
};

/** Problems found validating one emitted message against the 2026-07-28 schema (empty when valid). */
export function schemaProblems(method: string, message: any): string[] {
  if (message && 'error' in message) return validate('JSONRPCErrorResponse', message);
  if (message && 'result' in message) {
    const problems = validate('JSONRPCResultResponse', message);
    const def = message.result?.resultType === 'input_required' ? 'InputRequiredResult' : RESULT_DEF[method];
    return def ? problems.concat(validate(def, message.result)) : problems;
  }
  if (message?.method === 'notifications/progress') return validate('ProgressNotification', message);
  return validate('JSONRPCNotification', message);
}

/** A subscriptions/listen stream: collects its messages in order until closed. `meta`: the request's own _meta. */
export async function openListen(
  url: string,
  notifications: Record<string, unknown>,
  headers: Record<string, string> = {},
  meta?: Record<string, unknown>,
) {
  const body = request('subscriptions/listen', meta ? { notifications, _meta: meta } : { notifications });
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headersFor(body), ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  if (response.status !== 200 || response.headers.get('content-type') !== 'text/event-stream') {
    throw new Error(
      `listen answered ${response.status} ${response.headers.get('content-type')}: ${await response.text()}`,
    );
  }
  const { messages, done } = sseMessages(response);
  done.catch(() => {}); // closed by the test
  return { id: body.id, messages, close: () => controller.abort() };
}

/**
 * The JSON messages of an SSE response, pushed onto `messages` as they arrive; `done` resolves with them
 * when the stream ends (and rejects if it breaks, as when the test aborts it).
 */
export function sseMessages(response: Response): { messages: any[]; done: Promise<any[]> } {
  const messages: any[] = [];
  const done = eachSseMessage(response.body!, (message) => messages.push(message)).then(() => messages);
  return { messages, done };
}

/**
 * The text of a tools/call answer: its text content, joined by newlines. Takes what `post` returns (an Answer), a
 * JSON-RPC response, or a result; '' when there is no result or no text in it (so an assertion on it fails).
 */
export function textOf(from: any): string {
  const result = from && 'body' in from ? from.body?.result : from && 'jsonrpc' in from ? from.result : from;
  const content: unknown = result?.content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((c) => typeof c?.text === 'string')
    .map((c) => c.text as string)
    .join('\n');
}
