// Stdio-only hosts reach the gateway through mcp-remote (0.15.1), the stdio-to-remote client most such hosts
// use: the host spawns `mcp-remote <gateway>/mcp --header "Authorization: Bearer ${GW_KEY}"` and speaks MCP
// over its stdin/stdout. Two hosts — the SDK v2 client pinned to 2026-07-28 and the SDK 1.x (2025) client —
// each through mcp-remote as a host config would start it, and with `--protocol auto`: list, call, progress,
// and an input_required round trip whose requestState is 64 KiB+ of arbitrary text.
//
// What travels (see docs/deployment.md, "From a stdio-only host"):
// - a 2026-07-28 host's requests pass through mcp-remote as they are; its HTTP transport derives
//   MCP-Protocol-Version, Mcp-Method and Mcp-Name from each request's `_meta` and body, so the gateway serves
//   it as a modern client and its input_required answers reach the host as they came;
// - a 2025 host's `initialize` passes through by default and the gateway serves it as a 2025 client: a modern
//   upstream's input_required becomes an elicitation/create request from the gateway on the call's stream;
// - with `--protocol auto` mcp-remote finds the gateway modern (server/discover), answers the 2025 host's
//   handshake itself and turns each request into a stateless 2026 one, driving the round trip itself.
//
// mcp-remote runs with HOME, its config dir and PATH in a temp folder (removed at the end): the API key comes
// from the environment, so no OAuth flow starts, nothing is stored, and no browser could be found anyway. A key
// the gateway refuses ends mcp-remote at start.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Stream } from 'node:stream';
import { finished } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import { Client as Client2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as Stdio2 } from '@modelcontextprotocol/client/stdio';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as Stdio1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, ROOT, schemaProblems, startTestGateway, VERSION, textOf } from './harness.js';
import { tempDir } from '../temp.js';

const KEY = 'stdio-host-key-0123456789abcdef';
const MCP_REMOTE = path.join(ROOT, 'node_modules/mcp-remote/dist/proxy.js');
const ELICIT_OK = { action: 'accept', content: { ok: true } };

/** A JSON-RPC message as the host saw it on mcp-remote's stdout, or as it wrote it to mcp-remote's stdin. */
interface Wire {
  id?: string | number;
  method?: string;
  params?: Record<string, any>;
  result?: Record<string, any>;
  error?: { code: number; message: string };
}

/** What both hosts offer a test: the SDK calls, and every message that crossed stdio after connecting. */
interface Host {
  toolNames(): Promise<string[]>;
  call(
    name: string,
    args: Record<string, unknown>,
    onprogress?: (progress: number) => void,
  ): Promise<{ content: Array<{ type: string; text?: string }> }>;
  /** The params of every elicitation/create the host answered. */
  asked: Array<Record<string, unknown>>;
  received: Wire[];
  sent: Wire[];
  stderr(): string;
  close(): Promise<void>;
}

let gw: RunningGateway;
let tmp: string;
let configDir: string;

before(async () => {
  gw = await startTestGateway(
    {
      modern: fixture('modern-server'),
      raw: {
        command: process.execPath,
        args: ['test/fixtures/mrtr-raw-server.mjs'],
        cwd: ROOT,
        probeTimeoutMs: 30_000,
      },
    },
    {},
    {
      auth: { anonymous: false, apiKeys: [{ key: KEY, principal: 'stdio-host' }] },
      audit: { destination: '/dev/null' },
    },
  );
  tmp = tempDir('mcp-remote-e2e-');
  configDir = path.join(tmp, 'mcp-auth');
  for (const dir of ['home', 'bin']) mkdirSync(path.join(tmp, dir));
});

after(async () => {
  await gw?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** How a host config starts mcp-remote: the key stays in GW_KEY, which mcp-remote expands itself. */
function mcpRemote(extra: string[], key = KEY) {
  return {
    command: process.execPath,
    args: [MCP_REMOTE, `${gw.url}/mcp`, '--header', 'Authorization: Bearer ${GW_KEY}', ...extra],
    // Replaces what the SDKs would inherit (HOME, PATH…): nothing of this machine's own is read or written.
    env: { HOME: path.join(tmp, 'home'), MCP_REMOTE_CONFIG_DIR: configDir, PATH: path.join(tmp, 'bin'), GW_KEY: key },
    cwd: tmp,
    stderr: 'pipe' as const,
  };
}

interface Recordable {
  onmessage?: (message: unknown, ...rest: unknown[]) => void;
  send(message: unknown, ...rest: unknown[]): Promise<void>;
}

/** Records what crosses the host's stdio from now on (copies, in case the SDK rewrites what it holds). */
function record(transport: Recordable, received: Wire[], sent: Wire[]): void {
  const read = transport.onmessage!;
  transport.onmessage = (message, ...rest) => {
    received.push(structuredClone(message) as Wire);
    read.call(transport, message, ...rest);
  };
  const write = transport.send.bind(transport);
  transport.send = (message, ...rest) => {
    sent.push(structuredClone(message) as Wire);
    return write(message, ...rest);
  };
}

function collect(stream: Stream | null): () => string {
  let text = '';
  stream?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return () => text;
}

/** The SDK v2 client pinned to 2026-07-28, declaring elicitation. */
async function modernHost(extra: string[]): Promise<Host> {
  const transport = new Stdio2(mcpRemote(extra));
  const stderr = collect(transport.stderr);
  const asked: Host['asked'] = [];
  const client = new Client2(
    { name: 'stdio-host-2026', version: '1.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: VERSION } } },
  );
  client.setRequestHandler(
    'elicitation/create',
    async (request) => (asked.push(request.params as Record<string, unknown>), ELICIT_OK) as never,
  );
  await client.connect(transport);
  const received: Wire[] = [];
  const sent: Wire[] = [];
  record(transport as unknown as Recordable, received, sent);
  return {
    toolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: (name, args, onprogress) =>
      client.callTool(
        { name, arguments: args },
        onprogress ? { onprogress: (p) => onprogress(p.progress) } : {},
      ) as never,
    asked,
    received,
    sent,
    stderr,
    close: () => client.close(),
  };
}

/** The SDK 1.x client (2025-era: initialize, then a session), declaring elicitation. */
async function legacyHost(extra: string[]): Promise<Host> {
  const transport = new Stdio1(mcpRemote(extra));
  const stderr = collect(transport.stderr);
  const asked: Host['asked'] = [];
  const client = new Client1({ name: 'stdio-host-2025', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(
    ElicitRequestSchema,
    async (request) => (asked.push(request.params as Record<string, unknown>), ELICIT_OK) as never,
  );
  await client.connect(transport);
  const received: Wire[] = [];
  const sent: Wire[] = [];
  record(transport as unknown as Recordable, received, sent);
  return {
    toolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: (name, args, onprogress) =>
      client.callTool(
        { name, arguments: args },
        undefined,
        onprogress ? { onprogress: (p) => onprogress(p.progress) } : {},
      ) as never,
    asked,
    received,
    sent,
    stderr,
    close: () => client.close(),
  };
}

/** What mcp-remote logs when it starts a sign-in: a callback port on loopback, then a browser. */
const SIGN_IN = /Authentication required|Initializing auth coordination|Please authorize|open(ed)? (a|the) browser/i;
/** What mcp-remote stored in its config dir that a sign-in would leave behind. */
const storedCredentials = () =>
  (existsSync(configDir) ? readdirSync(configDir, { recursive: true }).map(String) : []).filter((file) =>
    /tokens|client_info|code_verifier/.test(file),
  );

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
/** The last request the host wrote for `method` (and tool `name`). */
const lastSent = (host: Host, method: string, name?: string) =>
  host.sent.filter((m) => m.method === method && (name === undefined || m.params?.name === name)).at(-1);
const answerTo = (host: Host, id: string | number | undefined) =>
  host.received.find((m) => m.id === id && m.method === undefined);

const SCENARIOS = [
  { host: '2026-07-28 host (SDK v2 client, pinned)', start: modernHost, modern: true, flags: [] as string[] },
  { host: '2026-07-28 host (SDK v2 client, pinned)', start: modernHost, modern: true, flags: ['--protocol', 'auto'] },
  { host: '2025 host (SDK 1.x client)', start: legacyHost, modern: false, flags: [] as string[] },
  { host: '2025 host (SDK 1.x client)', start: legacyHost, modern: false, flags: ['--protocol', 'auto'] },
];

for (const scenario of SCENARIOS) {
  describe(`${scenario.host} → mcp-remote ${scenario.flags.join(' ') || '(as a host config starts it)'} → /mcp with ` +
    `an API key`, {
    timeout: 120_000,
  }, () => {
    let host: Host;
    before(async () => {
      host = await scenario.start(scenario.flags);
    });
    after(() => host?.close());

    test('lists the aggregated tools', async () => {
      const names = await host.toolNames();
      for (const name of ['modern__echo', 'modern__progress', 'raw__state'])
        assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
      const answer = answerTo(host, lastSent(host, 'tools/list')?.id);
      if (scenario.modern) {
        // The gateway's own 2026-07-28 answer, relayed untouched.
        assert.equal(answer?.result?.resultType, 'complete');
        assert.deepEqual(schemaProblems('tools/list', answer), []);
      } else {
        // A 2025 answer: no resultType. By default the gateway's 2025 adapter answered (and left out ttlMs and
        // cacheScope too); with --protocol auto mcp-remote translated the gateway's 2026 answer (it keeps them).
        assert.ok(answer?.result && !('resultType' in answer.result), JSON.stringify(answer).slice(0, 300));
        if (!scenario.flags.includes('auto'))
          assert.ok(!('ttlMs' in answer.result) && !('cacheScope' in answer.result));
      }
    });

    test('calls a tool', async () => {
      assert.equal(textOf(await host.call('modern__echo', { text: 'through mcp-remote' })), 'through mcp-remote');
      if (scenario.modern)
        assert.deepEqual(
          schemaProblems('tools/call', answerTo(host, lastSent(host, 'tools/call', 'modern__echo')?.id)),
          [],
        );
    });

    test('progress notifications reach the host, in order, before the result', async () => {
      // The SDK clients run notification handlers a microtask after reading them but settle a response at once,
      // so a progress notification read in the same chunk as the result can miss its callback: the host's
      // stdio is where the test looks.
      const result = await host.call('modern__progress', { steps: 3 }, () => {});
      assert.equal(textOf(result), 'progressed 3');
      const request = lastSent(host, 'tools/call', 'modern__progress')!;
      const token = request.params?._meta?.progressToken;
      assert.notEqual(token, undefined);
      const progress = host.received.filter(
        (m) => m.method === 'notifications/progress' && m.params?.progressToken === token,
      );
      assert.deepEqual(
        progress.map((m) => m.params?.progress),
        [1, 2, 3],
      );
      const answerAt = host.received.indexOf(answerTo(host, request.id)!);
      assert.ok(
        answerAt > host.received.indexOf(progress.at(-1)!),
        'the result comes after the last progress notification',
      );
      if (scenario.modern) for (const m of progress) assert.deepEqual(schemaProblems('notifications/progress', m), []);
    });

    test(
      'an input_required round trip with a 64 KiB+ requestState: ' + 'the upstream gets it back byte for byte',
      async () => {
        const verdict = JSON.parse(textOf(await host.call('raw__state', { mode: 'big' })));
        assert.equal(verdict.identical, true, JSON.stringify(verdict));
        assert.equal(verdict.gotSha256, verdict.sentSha256);
        assert.deepEqual(verdict.inputResponses, { 'user answer': ELICIT_OK });
        assert.deepEqual(
          host.asked.map((params) => params.message),
          ['mode big?'],
          'the host was asked once',
        );

        const first = lastSent(host, 'tools/call', 'raw__state');
        if (scenario.modern) {
          // The host saw the upstream's input_required as it came and retried with the requestState it was given.
          const calls = host.sent.filter((m) => m.method === 'tools/call' && m.params?.name === 'raw__state');
          assert.equal(calls.length, 2, 'the first round and one retry');
          const asked = answerTo(host, calls[0]!.id)!;
          assert.equal(asked.result?.resultType, 'input_required');
          assert.deepEqual(schemaProblems('tools/call', asked), []);
          const state = asked.result!.requestState as string;
          assert.ok(Buffer.byteLength(state, 'utf8') >= 64 * 1024, `${Buffer.byteLength(state, 'utf8')} bytes`);
          assert.equal(sha(state), verdict.sentSha256, "the host received the upstream's requestState unchanged");
          assert.notEqual(calls[1]!.id, calls[0]!.id);
          assert.equal(calls[1]!.params?.requestState, state, 'the retry carried it back unchanged');
          assert.deepEqual(schemaProblems('tools/call', answerTo(host, calls[1]!.id)), []);
        } else {
          // A 2025 host cannot answer input_required: it was asked with a real elicitation/create request, either
          // by the gateway (serving it as a 2025 client) or, with --protocol auto, by mcp-remote.
          assert.equal(host.sent.filter((m) => m.method === 'tools/call' && m.params?.name === 'raw__state').length, 1);
          assert.ok(!('requestState' in (first?.params ?? {})));
          const question = host.received.filter((m) => m.method === 'elicitation/create');
          assert.equal(question.length, 1);
          const byGateway = String(question[0]!.id).startsWith('mcp-gateway-');
          assert.equal(byGateway, !scenario.flags.includes('auto'), `asked by ${question[0]!.id}`);
          assert.ok(verdict.sentChars > 40_000, `${verdict.sentChars} characters`);
        }
      },
    );

    test('signed in with the key alone: no OAuth flow, no browser, nothing stored', () => {
      assert.doesNotMatch(host.stderr(), SIGN_IN);
      assert.match(host.stderr(), /Replacing \$\{GW_KEY\} with environment value/);
      assert.deepEqual(storedCredentials(), []);
    });
  });
}

describe('a key the gateway refuses', { timeout: 60_000 }, () => {
  test("mcp-remote exits at start and the host's connect fails; no browser, nothing stored", async () => {
    const transport = new Stdio1(mcpRemote([], 'not-the-key-0123456789abcdef'));
    const stderr = collect(transport.stderr);
    const client = new Client1({ name: 'stdio-host-2025', version: '1.0.0' }, { capabilities: {} });
    try {
      // "Connection closed": mcp-remote ended before answering initialize (not a timeout).
      await assert.rejects(client.connect(transport), /Connection closed/);
      await finished(transport.stderr as Readable);
      // The gateway's 401 made mcp-remote try OAuth; with API keys only the gateway offers none, so it gave up
      // before binding a callback port or looking for a browser.
      assert.match(stderr(), /Dynamic Client Registration rejected \(HTTP 404\)/);
      assert.doesNotMatch(stderr(), SIGN_IN);
      assert.deepEqual(storedCredentials(), []);
    } finally {
      await client.close();
    }
  });
});
