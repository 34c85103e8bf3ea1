// The transparency suite's parts: one scenario list, what a client sees of an answer (status and the
// messages' own bytes), a modern server asked over stdio directly, and the comparison that allows exactly
// the rewrites docs/design.md lists ("What the gateway changes in what passes through"):
// 1. a result without `resultType` gets `"resultType":"complete"` appended, a cacheable one without
//    `ttlMs`/`cacheScope` gets 0 and "private" (nothing else changes);
// 2. on /mcp, tool and prompt names carry `<server>__`, lists are the gateway's merged pages (its own
//    serverInfo, ttlMs and cacheScope), server/discover is the gateway's own (its serverInfo; the upstream's
//    versions, features, ttlMs and cacheScope), and an error is worded by the gateway where it routes (a name
//    the upstream does not list, an unknown URI) — status and code stay the upstream's, and any other error
//    arrives as the upstream's bytes;
// 3. what the edge refuses before any upstream is asked is worded by the gateway (status and code as the spec says);
// 4. a JSON body of several lines (notifications, then the response) arrives as the stream it is;
// 5. a log message (`notifications/message`) reaches only a request that set a logLevel, at or above it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_TS } from '../run-ts.js';
import { createInterface } from 'node:readline';
import { headersFor, META, ROOT, schemaProblems, VERSION } from './harness.js';
import { sseData } from '../sse.js';

type Json = Record<string, any>;

export interface Scenario {
  name: string;
  method: string;
  params: Json;
  /** Changes to the headers a conforming client would send. */
  headers?: Record<string, string>;
  /** About HTTP headers: a stdio server cannot be asked, so its HTTP twin (the same server code) answers. */
  httpOnly?: boolean;
  /** Refused by the gateway's edge before any upstream is asked. */
  edge?: boolean;
}

const meta = (extra: Json = {}): Json => ({ ...META, ...extra });

export const SCENARIOS: Scenario[] = [
  { name: 'server/discover', method: 'server/discover', params: {} },
  { name: 'tools/list', method: 'tools/list', params: {} },
  { name: 'a tool call', method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
  {
    name: 'a tool call with progress',
    method: 'tools/call',
    params: { name: 'progress', arguments: { steps: 2 }, _meta: meta({ progressToken: 'tok' }) },
  },
  { name: 'an unknown tool (-32602, 200)', method: 'tools/call', params: { name: 'nope', arguments: {} } },
  { name: 'a tool that needs elicitation', method: 'tools/call', params: { name: 'needs-elicitation', arguments: {} } },
  {
    name: 'a tool that needs elicitation, asked with progress',
    method: 'tools/call',
    params: { name: 'needs-elicitation', arguments: {}, _meta: meta({ progressToken: 'tok' }) },
  },
  { name: 'a tool with _meta rules of its own', method: 'tools/call', params: { name: 'strict-meta', arguments: {} } },
  { name: 'prompts/list', method: 'prompts/list', params: {} },
  { name: 'prompts/get', method: 'prompts/get', params: { name: 'greet', arguments: { name: 'Ada' } } },
  { name: 'resources/read', method: 'resources/read', params: { uri: 'fixture://hello' } },
  { name: 'resources/read of an unknown URI', method: 'resources/read', params: { uri: 'fixture://nope' } },
  {
    name: 'a method the server does not serve',
    method: 'completion/complete',
    params: { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'A' } },
  },
  {
    name: 'a supported header, another _meta version',
    method: 'tools/list',
    params: { _meta: meta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) },
    httpOnly: true,
    edge: true,
  },
  {
    name: 'an unsupported version',
    method: 'tools/list',
    params: { _meta: meta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) },
    headers: { 'mcp-protocol-version': '2099-01-01' },
    httpOnly: true,
    edge: true,
  },
  {
    name: 'no clientCapabilities',
    method: 'tools/list',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION } },
    httpOnly: true,
    edge: true,
  },
  { name: 'an unknown method', method: 'foo/bar', params: {}, edge: true },
];

/** The request a client sends for a scenario; on /mcp, names that route carry the server's prefix. */
export function requestFor(scenario: Scenario, id: number, prefix = ''): { method: string; params: Json } & Json {
  const params: Json = { ...scenario.params, _meta: scenario.params._meta ?? meta() };
  if (prefix && (scenario.method === 'tools/call' || scenario.method === 'prompts/get'))
    params.name = prefix + params.name;
  if (prefix && scenario.method === 'completion/complete')
    params.ref = { ...params.ref, name: prefix + params.ref.name };
  return { jsonrpc: '2.0', id, method: scenario.method, params };
}

/** What a client sees: the status and each JSON-RPC message as sent (the response last). */
export interface Seen {
  status: number;
  messages: string[];
}

export async function askHttp(url: string, scenario: Scenario, body: { method: string; params?: Json }): Promise<Seen> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headersFor(body), ...scenario.headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const sse = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const messages = sse ? sseData(text) : text.split('\n').filter((line) => line.trim() !== '');
  return { status: response.status, messages };
}

/** A modern server over stdio, asked one request at a time: what it writes until the response. */
export class StdioPeer {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: string[] = [];
  private waiting: (() => void) | undefined;

  /** `script`: a .ts file runs through the tests' loader, JavaScript (a compiledFixture) as it is. */
  constructor(script: string) {
    const args = script.endsWith('.ts') ? [...RUN_TS, script] : [script];
    this.child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.resume();
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.lines.push(line);
      this.waiting?.();
    });
  }

  /** Everything the server writes from the request to its response; fails if no response comes in 10 s. */
  async ask(body: Json): Promise<string[]> {
    this.lines.length = 0;
    this.child.stdin.write(JSON.stringify(body) + '\n');
    const deadline = Date.now() + 10_000;
    for (;;) {
      const last = this.lines.at(-1);
      if (last !== undefined && isResponseTo(last, body.id)) return [...this.lines];
      assert.ok(
        Date.now() < deadline,
        `the stdio server did not answer ${JSON.stringify(body)}; it wrote ${JSON.stringify(this.lines)}`,
      );
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 100);
      });
    }
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

function isResponseTo(line: string, id: unknown): boolean {
  try {
    const message = JSON.parse(line);
    return message.id === id && ('result' in message || 'error' in message);
  } catch {
    return false;
  }
}

const CACHEABLE = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/**
 * The direct answer as the gateway must pass it on: a result without resultType gets "complete" appended,
 * and a cacheable one without ttlMs or cacheScope gets 0 and "private".
 */
function withResultType(text: string, method: string): string {
  const message = JSON.parse(text);
  if (!('result' in message)) return text;
  const result = message.result;
  const missing =
    !('resultType' in result) || (CACHEABLE.has(method) && (!('ttlMs' in result) || !('cacheScope' in result)));
  if (!missing) return text;
  result.resultType ??= 'complete';
  if (CACHEABLE.has(method) && result.resultType === 'complete') {
    result.ttlMs ??= 0;
    result.cacheScope ??= 'private';
  }
  return JSON.stringify(message);
}

const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** The direct notifications as the gateway must pass them on: log messages only as the request's logLevel asks. */
function asRelayed(scenario: Scenario, notifications: string[]): string[] {
  const wanted = LOG_LEVELS.indexOf(scenario.params._meta?.['io.modelcontextprotocol/logLevel']);
  return notifications.filter((text) => {
    const message = JSON.parse(text);
    return (
      message.method !== 'notifications/message' || (wanted >= 0 && LOG_LEVELS.indexOf(message.params?.level) >= wanted)
    );
  });
}

const LISTS: Record<string, string> = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
};

/**
 * The fixtures' names that do not fit ^[A-Za-z0-9_-]{1,64}$ as `<server>__<name>`, as /mcp must list them:
 * the name with each other character made '_', then '-' and the first 8 hex digits of
 * sha256('<server>\0<name>') (docs/design.md; worked out by hand: sha256('sdk\0grüße') begins 41ae719c).
 */
const PUBLIC_NAMES: Record<string, string> = { sdk__grüße: 'sdk__gr__e-41ae719c' };

/** The gateway's serverInfo in /mcp's server/discover: its package's name and version. */
const GATEWAY_INFO = {
  name: 'mcp-gateway',
  version: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
};

/**
 * What /mcp's server/discover must say in front of one upstream (docs/design.md, "The aggregate endpoint"):
 * the gateway's own serverInfo, and the upstream's versions, features (with listChanged and subscribe),
 * ttlMs and cacheScope.
 */
function assertGatewayDiscover(label: string, seen: Json, upstream: Json): void {
  const expected = { ...upstream, _meta: { 'io.modelcontextprotocol/serverInfo': GATEWAY_INFO } };
  assert.deepEqual(seen, expected, `${label}: the gateway's discover (upstream ${JSON.stringify(upstream)})`);
}

/** Which endpoint a comparison is about, and what its upstream does not list (answered by /mcp's router). */
export interface Where {
  aggregate: boolean;
  server: string;
  /** Tool names the upstream does not list (the gateway's router answers them on /mcp). */
  unlisted?: readonly string[];
}

/**
 * The error /mcp answers in its own words where it routes (docs/design.md: "the wording of an error for a
 * name or URI no upstream lists"), the upstream's code kept; undefined where the upstream's error passes.
 */
function routedError(scenario: Scenario, where: Where, code: number): Json | undefined {
  const name = scenario.params.name;
  if (scenario.method === 'tools/call' && where.unlisted?.includes(name)) {
    return {
      code,
      message:
        `Unknown tool: ${where.server}__${name}; its prefix names upstream '${where.server}', but it does ` +
        `not list a tool by that name`,
    };
  }
  if (scenario.method === 'resources/read' && scenario.params.uri === 'fixture://nope') {
    return {
      code,
      message: 'Resource not found: no upstream lists fixture://nope or a template that matches it',
      data: { uri: 'fixture://nope' },
    };
  }
  return undefined;
}

/** Asserts the client saw through the gateway what it saw directly, apart from the documented rewrites. */
export function assertSame(scenario: Scenario, direct: Seen, through: Seen, where: Where): void {
  const label = `${scenario.name} ${where.aggregate ? 'on /mcp' : 'on /servers/<name>/mcp'}`;
  for (const message of through.messages)
    assert.deepEqual(schemaProblems(scenario.method, JSON.parse(message)), [], `${label}: ${message}`);
  assert.equal(
    through.status,
    direct.status,
    `${label}: status (direct ${direct.messages.at(-1)}, through ${through.messages.at(-1)})`,
  );
  assert.deepEqual(
    through.messages.slice(0, -1),
    asRelayed(scenario, direct.messages.slice(0, -1)),
    `${label}: the notifications before the response`,
  );
  const seen = JSON.parse(through.messages.at(-1)!);
  const expected = withResultType(direct.messages.at(-1)!, scenario.method);
  const wanted = JSON.parse(expected);
  if ('error' in wanted) {
    assert.equal(seen.error?.code, wanted.error.code, `${label}: error code (through ${through.messages.at(-1)})`);
    // Worded by the gateway where it answers itself: at its edge, and on /mcp where it routes names.
    if (scenario.edge) return;
    const routed = where.aggregate ? routedError(scenario, where, wanted.error.code) : undefined;
    if (routed) return assert.deepEqual(seen.error, routed, `${label}: the router's error (upstream ${expected})`);
    return assert.equal(through.messages.at(-1), expected, `${label}: error bytes`);
  }
  assert.ok('result' in seen, `${label}: a result (through ${through.messages.at(-1)})`);
  if (!where.aggregate) return assert.equal(through.messages.at(-1), expected, `${label}: result bytes`);
  if (scenario.method === 'server/discover') return assertGatewayDiscover(label, seen.result, wanted.result);
  const key = LISTS[scenario.method];
  if (!key) return assert.equal(through.messages.at(-1), expected, `${label}: result bytes`);
  // Tools and prompts are renamed `<server>__<name>`, written down here rather than computed by public-names.ts
  // (the code under test); resources keep their names (URIs route them).
  const renamed = scenario.method === 'tools/list' || scenario.method === 'prompts/list';
  const originals = wanted.result[key].map((item: Json) =>
    renamed
      ? { ...item, name: PUBLIC_NAMES[`${where.server}__${item.name}`] ?? `${where.server}__${item.name}` }
      : item,
  );
  assert.deepEqual(seen.result[key], originals, `${label}: the list, renamed`);
}
