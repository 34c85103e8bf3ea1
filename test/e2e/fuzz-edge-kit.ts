// The fuzzing kit of the fuzz-edge-*.test.ts files: one running gateway with one modern upstream, as a child
// process (child-gateway.ts: the built dist/src/cli.js), so that a crash is observed as one instead of taking the test
// runner with it, with --expose-gc and a one-line preload that answers SIGUSR2 with a full GC and a line of
// process.memoryUsage() on stdout (the gateway writes nothing there); raw HTTP to it; and what a valid answer
// is: a 2xx carrying a valid JSON-RPC message (schema-checked) for that request, or a 4xx carrying a JSON-RPC
// error, never a 5xx. Every property stops at its first counterexample without shrinking (`endOnFailure`):
// after a crash every later request would fail too, and the first input is the one to report.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before } from 'node:test';
import fc from 'fast-check';
import { META, ROOT, schemaProblems, until, VERSION } from './harness.js';
import { launchGateway, type ChildGateway } from './child-gateway.js';
import { sseTextMessages } from '../sse.js';
import { tempDir } from '../temp.js';

// To replay a failure: FC_SEED=<seed> FC_PATH=<path> (both in the report; see test/fuzz-seed.ts) replays that
// input in every property; FUZZ_DUMP=<file> writes the body of a failing request there in full.
// FUZZ_SCALE=<n> multiplies every property's number of runs, for a longer search by hand.
export const SCALE = Math.max(1, Number(process.env.FUZZ_SCALE ?? 1) || 1);
export const REPLAY = { endOnFailure: true, includeErrorInReport: true };

// ---- the gateway under test, as a child process ----------------------------------------------------------

export const ALLOWED_ORIGIN = 'https://allowed.example';
export const MAX_BODY = 1024 * 1024;
/** Depth the ordinary properties nest values to; deeper nesting has its own property below. */
export const MODERATE_DEPTH = 200;
/** A single request's bound; a listen stream is read up to its first event, then dropped. */
const REQUEST_MS = 10_000;

export async function startChildGateway(dir: string, name: string): Promise<ChildGateway> {
  const config = path.join(dir, `${name}.config.json`);
  writeFileSync(
    config,
    JSON.stringify({
      listen: { port: 0, allowedOrigins: [ALLOWED_ORIGIN], maxBodyBytes: MAX_BODY },
      log: { level: 'error' },
      servers: {
        r: {
          command: process.execPath,
          args: ['test/fixtures/recording-server.mjs'],
          cwd: ROOT,
          era: 'modern',
          env: { RECORD_FILE: path.join(dir, `${name}.received.jsonl`) },
        },
      },
    }),
  );
  return launchGateway(config);
}

// ---- raw HTTP ----------------------------------------------------------------------------------------

export interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Sent with Transfer-Encoding: chunked instead of Content-Length. */
  chunked: boolean;
}

export interface Got {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/**
 * `listenStream`: a stream that stays open; its first event (or, for a GET stream, its headers) is all that is read.
 */
export function send(base: string, sent: Sent, listenStream: boolean): Promise<Got> {
  const url = new URL(base);
  return new Promise<Got>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: Got | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const headers: Record<string, string | number> = { ...sent.headers };
    // Node's client frames GET, DELETE and OPTIONS bodies only when told how: say it for every method.
    if (sent.method !== 'GET' && sent.method !== 'HEAD' && sent.method !== 'TRACE') {
      if (sent.chunked) headers['transfer-encoding'] = 'chunked';
      else headers['content-length'] = sent.body.length;
    }
    const req = http.request(
      { host: url.hostname, port: url.port, path: sent.path, method: sent.method, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        const got = (): Got => ({
          status: res.statusCode!,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        });
        // A 2025 session's GET stream may say nothing for a long time: its headers are the answer.
        if (
          sent.method === 'GET' &&
          res.statusCode === 200 &&
          String(res.headers['content-type']).startsWith('text/event-stream')
        ) {
          finish(got());
          req.destroy();
          return;
        }
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          // A listen stream lives until its client leaves: its first event is all this test reads.
          if (listenStream && Buffer.concat(chunks).includes('\n\n')) {
            finish(got());
            req.destroy();
          }
        });
        res.on('end', () => finish(got()));
        res.on('error', (error) => finish(error));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish(new Error(`no complete answer within ${REQUEST_MS} ms`));
    }, REQUEST_MS);
    // A refusal (413) may close the connection while the body is still being written: the answer counts.
    req.on('error', (error) => setTimeout(() => finish(error), 50));
    if (sent.method === 'GET' || sent.method === 'HEAD' || sent.method === 'TRACE') req.end();
    else if (sent.chunked) {
      req.write(sent.body);
      req.end();
    } else req.end(sent.body);
  });
}

// ---- what a valid answer is -----------------------------------------------------------------------------

const JSON_RPC_REFUSALS = new Set([400, 403, 404, 405, 406, 413, 415]);

function isValidId(id: unknown): boolean {
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
}

export function parsedBody(sent: Sent): unknown {
  try {
    return JSON.parse(sent.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * JSON-RPC 2.0 alone: a response (result object, or error with an integer code and a message) or a
 * request/notification.
 */
function jsonRpcProblems(message: unknown): string[] {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return ['not an object'];
  const m = message as Record<string, unknown>;
  const problems: string[] = [];
  if (m.jsonrpc !== '2.0') problems.push('jsonrpc is not "2.0"');
  if ('id' in m && !isValidId(m.id)) problems.push(`id ${JSON.stringify(m.id)}`);
  if ('result' in m) {
    if (m.result === null || typeof m.result !== 'object' || Array.isArray(m.result))
      problems.push('result is not an object');
    if (!('id' in m)) problems.push('a result without an id');
    if ('error' in m) problems.push('both result and error');
  } else if ('error' in m) {
    const e = m.error as Record<string, unknown> | null;
    if (!e || typeof e !== 'object' || !Number.isInteger(e.code) || typeof e.message !== 'string')
      problems.push('error is not {code, message}');
  } else if (typeof m.method !== 'string') problems.push('neither a response nor a request');
  return problems;
}

/** What is wrong with this answer to this request (undefined: nothing). */
export function problemWith(sent: Sent, got: Got): string | undefined {
  const { status } = got;
  const request = parsedBody(sent);
  const asked =
    request !== null && typeof request === 'object' && !Array.isArray(request)
      ? (request as Record<string, unknown>)
      : undefined;
  const rpcMethod = typeof asked?.method === 'string' ? asked.method : '';
  if (status >= 500) return `a ${status}: ${got.text.slice(0, 300)}`;
  if (status < 200 || (status >= 300 && status < 400)) return `an unexpected status ${status}`;
  if (sent.method === 'HEAD') return got.text === '' ? undefined : 'a body on a HEAD answer';
  if (sent.method === 'GET' && status === 200) {
    // Only a 2025 session (initialize first) has a GET stream.
    return String(got.headers['content-type']).startsWith('text/event-stream') &&
      sent.headers['mcp-session-id'] !== undefined
      ? undefined
      : `GET answered 200 ${got.headers['content-type']}`;
  }
  if (sent.method === 'DELETE' && status === 200 && got.text === '') {
    return sent.headers['mcp-session-id'] !== undefined ? undefined : 'DELETE answered 200 without a session';
  }
  if (status === 204)
    return sent.method === 'OPTIONS' && got.text === ''
      ? undefined
      : `204 to ${sent.method} with ${JSON.stringify(got.text.slice(0, 100))}`;
  if (status === 202) {
    if (got.text !== '') return 'a 202 with a body';
    if (asked && !('id' in asked) && typeof asked.method === 'string') return undefined; // a notification
    // On a 2025 session, a client's answer to a request the gateway sent it (a response has no method).
    if (
      asked &&
      sent.headers['mcp-session-id'] !== undefined &&
      !('method' in asked) &&
      ('result' in asked || 'error' in asked)
    )
      return undefined;
    return "a 202 for something other than a notification or a 2025 client's response";
  }
  if (status >= 400 && !JSON_RPC_REFUSALS.has(status))
    return `status ${status} (not a refusal the edge makes without auth)`;

  const type = String(got.headers['content-type'] ?? '');
  let messages: unknown[];
  try {
    if (status === 200 && type.startsWith('text/event-stream')) messages = sseTextMessages(got.text);
    else if (type.startsWith('application/json')) messages = [JSON.parse(got.text)];
    else return `status ${status} with Content-Type ${JSON.stringify(type)}: ${got.text.slice(0, 200)}`;
  } catch (error) {
    return `an unreadable body (${(error as Error).message}): ${got.text.slice(0, 200)}`;
  }
  if (messages.length === 0) return 'an SSE answer without messages';
  const last = messages.at(-1) as Record<string, unknown>;
  const streamOpened = rpcMethod === 'subscriptions/listen' && status === 200 && type.startsWith('text/event-stream');
  // A request without the modern _meta may be served as a 2025-era exchange (initialize, sessions): its
  // answers follow that revision, so they are held to JSON-RPC 2.0 itself, not to the 2026 schema.
  const params = asked?.params as Record<string, unknown> | undefined;
  const meta =
    params !== null && typeof params === 'object' ? (params._meta as Record<string, unknown> | undefined) : undefined;
  const modern = meta !== null && typeof meta === 'object' && 'io.modelcontextprotocol/protocolVersion' in meta;
  for (const message of messages) {
    const problems =
      modern || status >= 400 ? schemaProblems(status >= 400 ? '' : rpcMethod, message) : jsonRpcProblems(message);
    if (problems.length)
      return (
        `not a valid JSON-RPC message: ${problems.slice(0, 3).join('; ')} in ` +
        `${JSON.stringify(message).slice(0, 300)}`
      );
  }
  if (streamOpened) return undefined; // its first event, a notification, was checked above
  if (status >= 400) {
    if (!('error' in last)) return `a ${status} without a JSON-RPC error`;
  } else if (!('result' in last) && !('error' in last)) {
    return 'a 200 whose last message is not a response';
  }
  if ('id' in last) {
    if (!asked || !isValidId(asked.id) || JSON.stringify(asked.id) !== JSON.stringify(last.id)) {
      return (
        `answered with id ${JSON.stringify(last.id)} to a request whose id is ` +
        `${asked ? JSON.stringify(asked.id) : '(unreadable)'}`
      );
    }
  } else if ('result' in last) {
    return 'a result without an id';
  }
  if ('result' in last && !(status === 200 && asked && isValidId(asked.id)))
    return 'a result to something that is not a valid request';
  return undefined;
}

// ---- a gateway per test file, and one exchange with it ----------------------------------------------------

/** Requests sent so far in this file (the memory property reports how many its rounds made). */
export const sentSoFar = { exchanges: 0 };
const recent: string[] = [];

/** Starts the file's gateway before its tests and stops it after them; `current()` is that gateway. */
export function gatewayForThisFile(): { current(): ChildGateway; dir: string } {
  const dir = tempDir('mcp-gw-fuzz-');
  let gateway: ChildGateway | undefined;
  before(async () => {
    gateway = await startChildGateway(dir, 'main');
  });
  after(async () => {
    agent.destroy();
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    current: () => {
      assert.ok(gateway, 'the gateway did not start');
      return gateway;
    },
  };
}

/** One exchange: the answer must be acceptable, and the gateway must still be running. */
export async function exchange(target: ChildGateway, sent: Sent): Promise<void> {
  sentSoFar.exchanges++;
  recent.push(describeSent(sent).slice(0, 400));
  if (recent.length > 4) recent.shift();
  const request = parsedBody(sent) as Record<string, unknown> | undefined;
  const listen = request?.method === 'subscriptions/listen';
  let got: Got | undefined;
  try {
    got = await send(target.base, sent, listen)
      .catch((error: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed just as it was reused: a client sends again on a new one.
        if (!['EPIPE', 'ECONNRESET'].includes(error.code ?? '') || target.child.exitCode !== null) throw error;
        return send(target.base, sent, listen);
      })
      .catch((error: NodeJS.ErrnoException) => {
        // Node's own HTTP parser refuses header values it cannot read (its 400 and closed socket come before
        // the gateway sees the request); with a large body still being written, the client sees EPIPE.
        const unreadable = Object.values(sent.headers).some((value) => /[^\t\x20-\x7e]/.test(String(value)));
        if (unreadable && ['EPIPE', 'ECONNRESET'].includes(error.code ?? '') && target.child.exitCode === null)
          return undefined;
        throw error;
      });
    if (got === undefined) return;
  } catch (error) {
    const died = target.child.exitCode !== null || target.child.signalCode !== null;
    throw new Error(
      `${died ? 'the gateway died' : 'no answer'} (${(error as Error).message}) on ` +
        `${describeSent(sent)}\n${died ? target.log() : ''}\nRECENT:\n${recent.join('\n---\n')}`,
    );
  }
  const problem = problemWith(sent, got);
  if (problem) {
    if (process.env.FUZZ_DUMP) writeFileSync(process.env.FUZZ_DUMP, sent.body);
    throw new Error(`${problem}\non ${describeSent(sent)}`);
  }
}

export function describeSent(sent: Sent): string {
  const body = sent.body.toString('utf8');
  const shown = body.length > 600 ? `${body.slice(0, 300)}…(${sent.body.length} bytes)…${body.slice(-200)}` : body;
  return (
    `${sent.method} ${sent.path} ` +
    `${JSON.stringify(sent.headers).slice(0, 600)}${sent.chunked ? ' (chunked)' : ''}\n${shown}`
  );
}

/** After each batch: the process runs, and a normal call through /mcp echoes its payload to its caller. */
export async function assertServing(target: ChildGateway): Promise<void> {
  assert.equal(target.child.exitCode, null, `the gateway exited:\n${target.log()}`);
  const marker = `alive-${Date.now()}-${Math.random()}`;
  const body = {
    jsonrpc: '2.0',
    id: marker,
    method: 'tools/call',
    params: { name: 'r__echo', arguments: { text: marker }, _meta: META },
  };
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': VERSION,
    'mcp-method': 'tools/call',
    'mcp-name': 'r__echo',
  };
  const got = await send(
    target.base,
    { method: 'POST', path: '/mcp', headers, body: Buffer.from(JSON.stringify(body)), chunked: false },
    false,
  );
  assert.equal(got.status, 200, got.text);
  const answer = JSON.parse(got.text);
  assert.equal(answer.id, marker);
  assert.deepEqual(JSON.parse(answer.result.content[0].text), { text: marker });
}

async function inFlight(target: ChildGateway): Promise<number> {
  const text = await (await fetch(`${target.base}/metrics`)).text();
  const match = /^mcp_gateway_requests_in_flight (\S+)$/m.exec(text);
  assert.ok(match, 'mcp_gateway_requests_in_flight in /metrics');
  return Number(match[1]);
}

export async function assertIdle(target: ChildGateway): Promise<void> {
  assert.ok(
    await until(async () => (await inFlight(target)) === 0, 5_000),
    `requests still in flight: ${await inFlight(target)}`,
  );
}

/** A body that fast-check prints shortened in counterexamples (some are megabytes). */
export class Body {
  constructor(readonly bytes: Buffer) {}
  [fc.toStringMethod](): string {
    const text = this.bytes.toString('utf8');
    return text.length > 400
      ? `Body(${this.bytes.length} bytes: ${JSON.stringify(text.slice(0, 200))}…${JSON.stringify(text.slice(-100))})`
      : `Body(${JSON.stringify(text)})`;
  }
}
export const utf8 = (arb: fc.Arbitrary<string>) => arb.map((text) => new Body(Buffer.from(text, 'utf8')));
