// What the mrtr-*.test.ts files share: gateways started with a recording log, MRTR requests and their
// retries, assertions on input_required / complete / invalid-requestState answers, the official SDK v2
// client with handlers for the questions, and the fixtures' keys and roots.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import type { RecordingLog } from '../recording-log.js';
import { type Answer, headersFor, META, ROOT, schemaProblems, sseMessages, VERSION } from './harness.js';
import { compiledFixture } from '../compiled-fixtures.js';

// ---- plumbing ---------------------------------------------------------------------------------------------

export const CAPS = 'io.modelcontextprotocol/clientCapabilities';
// A generous probeTimeoutMs: under load a silent probe would be taken for a 2025 server.
export const mrtrSdk = {
  command: process.execPath,
  args: [compiledFixture('mrtr-server')],
  cwd: ROOT,
  probeTimeoutMs: 30_000,
};
export const mrtrRaw = (env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: ['test/fixtures/mrtr-raw-server.mjs'],
  cwd: ROOT,
  env,
  probeTimeoutMs: 30_000,
});

/** A gateway in process; with `recording` (test/recording-log.ts), everything it logs is kept there. */
export async function startGw(
  servers: Record<string, unknown>,
  rest: Record<string, unknown> = {},
  recording?: RecordingLog,
): Promise<RunningGateway> {
  const config = parseConfig({ listen: { port: 0 }, servers, ...rest }, 'test', ROOT);
  return startGateway(config, recording?.log ?? silentLog);
}

let nextId = 1;
/** A request id not used before in this file. */
export const freshId = (): string => `r${nextId++}`;
/** A tools/call (or other method) declaring exactly `capabilities`. */
export function call(
  name: string,
  args: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = {},
  method = 'tools/call',
) {
  const params: Record<string, unknown> = method === 'resources/read' ? { uri: name } : { name, arguments: args };
  return {
    jsonrpc: '2.0' as const,
    id: freshId(),
    method,
    params: { ...params, _meta: { ...META, [CAPS]: capabilities } },
  };
}

/** The retry of `first`: a new id, the same params, inputResponses and the requestState as they came. */
export function retry(
  first: ReturnType<typeof call>,
  requestState: unknown,
  inputResponses: Record<string, unknown>,
  changes: Record<string, unknown> = {},
) {
  return { ...first, id: freshId(), params: { ...first.params, ...changes, inputResponses, requestState } };
}

/** Asserts an input_required answer valid against the schema; returns its result. */
export function inputRequired(
  answer: Answer,
  method = 'tools/call',
): { inputRequests: Record<string, { method: string; params: any }>; requestState: string } {
  assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 500));
  assert.equal(answer.body?.result?.resultType, 'input_required', JSON.stringify(answer.body).slice(0, 500));
  assert.deepEqual(schemaProblems(method, answer.body), []);
  assert.equal(typeof answer.body.result.requestState, 'string');
  return answer.body.result;
}

/** Asserts a complete (valid) answer; returns its result. */
export function complete(answer: Answer, method = 'tools/call'): any {
  assert.equal(answer.status, 200);
  assert.ok(answer.body?.result, JSON.stringify(answer.body).slice(0, 500));
  assert.notEqual(answer.body.result.resultType, 'input_required', JSON.stringify(answer.body).slice(0, 500));
  assert.deepEqual(schemaProblems(method, answer.body), []);
  return answer.body.result;
}

/** Asserts a -32602 "Invalid requestState" error whose message matches `why`. */
export function invalidState(answer: Answer, why: RegExp): void {
  assert.equal(answer.body?.error?.code, -32602, JSON.stringify(answer.body));
  assert.match(answer.body.error.message, /^Invalid requestState: /);
  assert.match(answer.body.error.message, why);
  assert.match(answer.body.error.message, /send the original request again/);
  assert.deepEqual(schemaProblems('tools/call', answer.body), []);
}

export const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
/** What the gateway's own requestState says (the test may read it; clients must not rely on it). */
export const stateBody = (token: string): any =>
  JSON.parse(Buffer.from(token.slice('mcpgw1.'.length, token.lastIndexOf('.')), 'base64url').toString('utf8'));

export type Handlers = {
  elicit?: (params: any) => Record<string, unknown>;
  sample?: (params: any) => Record<string, unknown>;
  roots?: () => Record<string, unknown>;
};

/** The official SDK v2 client, pinned to 2026-07-28, declaring a capability for each handler given. */
export async function sdkClient(url: string, handlers: Handlers = {}, fetchImpl?: FetchLike): Promise<Client> {
  const capabilities: Record<string, object> = {};
  if (handlers.elicit) capabilities.elicitation = {};
  if (handlers.sample) capabilities.sampling = {};
  if (handlers.roots) capabilities.roots = {};
  const client = new Client(
    { name: 'mrtr-e2e', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: VERSION } } },
  );
  if (handlers.elicit)
    client.setRequestHandler('elicitation/create', async (request) => handlers.elicit!(request.params) as never);
  if (handlers.sample)
    client.setRequestHandler('sampling/createMessage', async (request) => handlers.sample!(request.params) as never);
  if (handlers.roots) client.setRequestHandler('roots/list', async () => handlers.roots!() as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), fetchImpl ? { fetch: fetchImpl } : {}));
  return client;
}

/** Runs `use` with an SDK v2 client on `url`, closing the client whatever `use` does. */
export async function withSdkClient(
  url: string,
  handlers: Handlers,
  use: (client: Client) => Promise<void>,
): Promise<void> {
  const client = await sdkClient(url, handlers);
  try {
    await use(client);
  } finally {
    await client.close();
  }
}

/** The same tool or prompt asked for on its server's own endpoint and on /mcp, where its name is prefixed. */
export function onBothEndpoints(server: string, name: string): [endpoint: string, name: string][] {
  return [
    [`/servers/${server}/mcp`, name],
    ['/mcp', `${server}__${name}`],
  ];
}

/** A POST whose SSE messages are collected as they arrive (for a call that must be seen in flight). */
export async function stream(
  url: string,
  body: { method: string; params?: Record<string, unknown> },
  headers: Record<string, string> = {},
) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headersFor(body), ...headers },
    body: JSON.stringify(body),
  });
  assert.equal(response.headers.get('content-type'), 'text/event-stream');
  return sseMessages(response);
}

export const ELICIT_OK = { action: 'accept', content: { ok: true } };

export const ALICE = 'alice-key-0123456789';
export const BOB = 'bob-key-0123456789ab';
export const as = (key: string) => ({ authorization: `Bearer ${key}` });
export const ROOTS = [{ uri: 'file:///srv', name: 'srv' }];
