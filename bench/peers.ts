// npm run bench -- peers: tools/call of `echo` on the same upstream (the SDK v2 modern-only stdio fixture)
// through mcp-gateway, the HTTP floor (a bare node:http server answering itself), stdio directly, mcp-proxy
// and supergateway — same load generator (bench/load.ts), same payloads, at 1, 16 and 64 clients, runs
// interleaved per concurrency so drift on this shared machine hits every path alike. Also one tools/list
// pair for the cache target: the gateway's cached /mcp list (3 upstreams × 17 tools) vs mcp-proxy listing
// one upstream of 51 tools. Loopback only; every run bounded by a count and a deadline; every process
// started here is stopped (with its descendants) at the end.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGateway } from './aggregate.js';
import { gatewayEntry } from './build.js';
import { httpLoad, type LoadResult } from './load.js';
import { cpuNs } from './ab-gateways.js';
import { alive, descendants, freePort, rssMb, spawnServer, stopTree, waitFor } from './procs.js';
import { stdioLoad } from './stdio-direct.js';
import { META, mcpHeaders } from './wire.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CALL_HEADERS = mcpHeaders('tools/call', 'echo');
const LIST_HEADERS = mcpHeaders('tools/list');
const node = process.execPath;
const upstreamArgs = ['--import', 'tsx', 'test/fixtures/modern-server.ts'];
/** The upstream as one command line (relative path: every peer is started with cwd = the repository). */
const UPSTREAM = `${node} ${upstreamArgs.join(' ')}`;
const bin = (pkg: string, file: string) => path.join(ROOT, 'node_modules', pkg, file);

export type PeerKey = 'gateway' | 'floor' | 'stdio' | 'mcp-proxy' | 'supergateway';
export const PEER_LABELS: Record<PeerKey, string> = {
  gateway: 'mcp-gateway (HTTP → stdio bridge)',
  floor: 'HTTP floor (bare node:http, no upstream)',
  stdio: 'stdio direct (no HTTP)',
  'mcp-proxy': 'mcp-proxy 6.7.19',
  supergateway: 'supergateway 4.0.0 (child per request)',
};
const ORDER: PeerKey[] = ['floor', 'gateway', 'mcp-proxy', 'stdio', 'supergateway'];

export interface PeerRow {
  key: PeerKey;
  path: string;
  concurrency: number;
  result: LoadResult;
  /** CPU of the HTTP server process itself (all its threads, not its children) per answered call, µs. */
  cpuUsPerCall?: number;
}

export interface PeersResult {
  rows: PeerRow[];
  /** tools/list at 16 clients: the gateway's cached aggregate list vs mcp-proxy's list of one upstream. */
  lists: { key: string; label: string; tools: number; result: LoadResult }[];
  /** How each path was started, as run (paths shortened to the repository). */
  commands: Record<string, string>;
  /** VmRSS of each HTTP server process (not its children) after its runs, MB. */
  rssMb: Record<string, number>;
  notes: string[];
}

const text = (key: string, c: number, i: number) => `${key}-${c}-${i}`;
const echo = (i: number, t: string) => ({
  jsonrpc: '2.0',
  id: i,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: t }, _meta: META },
});

/** The JSON-RPC response in an answer: a JSON body, or the last `data:` line of an SSE one. */
function parseAnswer(body: string): any {
  const first = body.charCodeAt(0);
  if (first === 123 /* { */) return JSON.parse(body);
  const data = body.split('\n').filter((line) => line.startsWith('data:'));
  return data.length ? JSON.parse(data[data.length - 1]!.slice(5)) : undefined;
}
const echoes = (body: string, i: number, t: string) => {
  try {
    const response = parseAnswer(body);
    return response?.id === i && response.result?.content?.[0]?.text === t && response.error === undefined;
  } catch {
    return false;
  }
};

interface Server {
  key: string;
  url: string;
  process: ChildProcess;
  command: string;
  log: () => string;
}

const shortCmd = (args: string[]) =>
  args
    .map((a) => a.split(ROOT).join(''))
    .map((a) => (a === node ? 'node' : a.split(node).join('node')))
    .map((a) => (/[\s"]/.test(a) ? JSON.stringify(a) : a))
    .join(' ');

async function readyByCall(what: string, url: string, log: () => string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    what,
    async () => {
      const r = await httpLoad({
        url,
        headers: CALL_HEADERS,
        body: (i) => JSON.stringify(echo(i, `ready-${i}`)),
        check: (b, i) => echoes(b, i, `ready-${i}`),
        concurrency: 1,
        total: 1,
        deadlineMs: 15_000,
      });
      return r.errors === 0 && r.calls === 1;
    },
    timeoutMs,
    log,
  );
}

async function startFloor(started: ChildProcess[]): Promise<Server> {
  const args = [path.join(ROOT, 'bench/floor-server.mjs')];
  const s = spawnServer(node, args, { cwd: ROOT });
  started.push(s.process);
  let port = 0;
  await waitFor(
    'the HTTP floor',
    async () => ((port = Number(/listening (\d+)/.exec(s.log())?.[1] ?? 0)), port > 0),
    10_000,
    s.log,
  );
  return {
    key: 'floor',
    url: `http://127.0.0.1:${port}/mcp`,
    process: s.process,
    command: shortCmd([node, ...args]),
    log: s.log,
  };
}

async function startGatewayBridge(started: ChildProcess[]): Promise<Server> {
  const args = [gatewayEntry(), '--stdio', UPSTREAM, '--name', 'echo', '--port', '0'];
  const s = spawnServer(node, args, { cwd: ROOT });
  started.push(s.process);
  let url = '';
  await waitFor(
    'mcp-gateway',
    async () => ((url = /"endpoint":"([^"]+\/servers\/echo\/mcp)"/.exec(s.log())?.[1] ?? ''), url !== ''),
    30_000,
    s.log,
  );
  return { key: 'gateway', url, process: s.process, command: shortCmd([node, ...args]), log: s.log };
}

/** mcp-proxy: the 2026-07-28 leg of its stream endpoint is per request (no session); --upstreamProtocol auto
 * is needed for it to talk to a modern-only server (its default upstream handshake is 2025 initialize). */
async function startMcpProxy(
  started: ChildProcess[],
  upstream: string[],
  env: Record<string, string> = {},
): Promise<Server> {
  const port = await freePort();
  const args = [
    bin('mcp-proxy', 'dist/bin/mcp-proxy.mjs'),
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--upstreamProtocol',
    'auto',
    '--',
    ...upstream,
  ];
  const s = spawnServer(node, args, { cwd: ROOT, env: { ...process.env, ...env } });
  started.push(s.process);
  return {
    key: 'mcp-proxy',
    url: `http://127.0.0.1:${port}/mcp`,
    process: s.process,
    command: shortCmd([node, ...args]),
    log: s.log,
  };
}

/** supergateway: stdio → Streamable HTTP, stateless (its default). It has no host option, so it runs with
 * bench/loopback-only.mjs preloaded, which makes its listen(port) bind 127.0.0.1. */
async function startSupergateway(started: ChildProcess[]): Promise<Server> {
  const port = await freePort();
  const args = [
    '--import',
    path.join(ROOT, 'bench/loopback-only.mjs'),
    bin('supergateway', 'dist/index.js'),
    '--stdio',
    UPSTREAM,
    '--outputTransport',
    'streamableHttp',
    '--port',
    String(port),
    '--logLevel',
    'none',
  ];
  const s = spawnServer(node, args, { cwd: ROOT });
  started.push(s.process);
  return {
    key: 'supergateway',
    url: `http://127.0.0.1:${port}/mcp`,
    process: s.process,
    command: shortCmd([node, ...args]),
    log: s.log,
  };
}

/** Calls per run for supergateway (it spawns a child per request): few, or it would take hours.
 * BENCH_SG_CALLS=50,100,128 sets them per concurrency level (in BENCH_CONCURRENCY's order). */
export function supergatewayCalls(concurrency: number, levels: number[] = [concurrency]): number {
  const given = process.env.BENCH_SG_CALLS?.split(',').map(Number)[levels.indexOf(concurrency)];
  if (given && given > 0) return given;
  return concurrency <= 1 ? 50 : Math.max(100, 2 * concurrency);
}

/** Waits (up to 60 s) until a server has no child processes left running. */
async function quiet(pid: number): Promise<void> {
  const until = Date.now() + 60_000;
  while (descendants(pid).some(alive) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 250));
}

export async function peersBench(options: {
  total: number;
  concurrency: number[];
  log?: (line: string) => void;
}): Promise<PeersResult> {
  const say = options.log ?? (() => {});
  const started: ChildProcess[] = [];
  const notes: string[] = [];
  const rows: PeerRow[] = [];
  const lists: PeersResult['lists'] = [];
  const commands: Record<string, string> = {};
  const rss: Record<string, number> = {};
  try {
    const floor = await startFloor(started);
    const gateway = await startGatewayBridge(started);
    const proxy = await startMcpProxy(started, [node, ...upstreamArgs]);
    const sg = await startSupergateway(started);
    await readyByCall('mcp-proxy', proxy.url, proxy.log);
    await readyByCall('supergateway', sg.url, sg.log);
    const http: Record<string, Server> = { floor, gateway, 'mcp-proxy': proxy, supergateway: sg };
    for (const s of Object.values(http)) commands[s.key] = s.command;
    commands.stdio = shortCmd([node, ...upstreamArgs]);

    // Warm-up: JIT, connections, the gateway's era probe; supergateway only proves it answers.
    for (const key of ['floor', 'gateway', 'mcp-proxy'] as const) {
      const s = http[key]!;
      const w = await httpLoad({
        url: s.url,
        headers: CALL_HEADERS,
        body: (i) => JSON.stringify(echo(i, text('warm', 0, i))),
        check: (b, i) => echoes(b, i, text('warm', 0, i)),
        concurrency: 16,
        total: 2_000,
        deadlineMs: 120_000,
      });
      if (w.errors) notes.push(`${key}: ${w.errors} errors in warm-up`);
    }

    for (const c of options.concurrency) {
      for (const key of ORDER) {
        let result: LoadResult;
        let cpuUsPerCall: number | undefined;
        if (key === 'stdio') {
          result = await stdioLoad({
            command: node,
            args: upstreamArgs,
            cwd: ROOT,
            message: (i) => echo(i, text(key, c, i)),
            check: (r, i) => r?.id === i && r.result?.content?.[0]?.text === text(key, c, i),
            concurrency: c,
            total: options.total,
            warmup: 2_000,
            deadlineMs: 300_000,
          });
        } else {
          const total = key === 'supergateway' ? supergatewayCalls(c, options.concurrency) : options.total;
          const pid = http[key]!.process.pid!;
          const cpuBefore = cpuNs(pid);
          result = await httpLoad({
            url: http[key]!.url,
            headers: CALL_HEADERS,
            body: (i) => JSON.stringify(echo(i, text(key, c, i))),
            check: (b, i) => echoes(b, i, text(key, c, i)),
            concurrency: c,
            total,
            deadlineMs: 300_000,
          });
          cpuUsPerCall = (cpuNs(pid) - cpuBefore) / 1e3 / Math.max(1, result.calls);
        }
        rows.push({ key, path: PEER_LABELS[key], concurrency: c, result, cpuUsPerCall });
        // supergateway's per-request children outlive their answers for a while; the next runs must not
        // share the cores with them.
        if (key === 'supergateway') await quiet(sg.process.pid!);
        say(
          `peers: ${key} ×${c}: p50 ${result.p50Ms.toFixed(3)} ms, p99 ${result.p99Ms.toFixed(2)} ms, ` +
            `${result.callsPerSecond.toFixed(0)}/s, ${result.errors} errors${result.timedOut ? ' (deadline)' : ''}`,
        );
      }
    }
    for (const [key, s] of Object.entries(http)) rss[key] = rssMb(s.process.pid!);
    // supergateway is the slow one; stop it before the list runs so its children do not share the cores.
    await stopTree(sg.process);

    // tools/list for the cache target: cached aggregate on the gateway (3 × 17 = 51 tools) vs mcp-proxy
    // in front of one synthetic upstream of 51 tools.
    const gw3 = await startGateway(3, 17, { listTtlMs: 60_000 });
    started.push(gw3.process);
    const proxyList = await startMcpProxy(started, [
      'env',
      'SERVER_ID=s0',
      'TOOL_COUNT=51',
      node,
      path.join(ROOT, 'test/fixtures/synthetic-server.mjs'),
    ]);
    started.push(proxyList.process);
    await waitFor(
      'mcp-proxy (synthetic upstream)',
      async () =>
        (
          await httpLoad({
            url: proxyList.url,
            headers: LIST_HEADERS,
            body: (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list', params: { _meta: META } }),
            check: () => true,
            concurrency: 1,
            total: 1,
            deadlineMs: 15_000,
          })
        ).errors === 0,
      60_000,
      proxyList.log,
    );
    commands['gateway /mcp (lists)'] =
      `node bench/.build/src/cli.js --config <3 synthetic upstreams × 17 tools, ttlMs 60000, memory cache>`;
    commands['mcp-proxy (lists)'] = proxyList.command;
    for (const [key, url, label] of [
      ['gateway', gw3.url, 'mcp-gateway /mcp, cached (3 upstreams × 17 tools)'],
      ['mcp-proxy', proxyList.url, 'mcp-proxy 6.7.19, one upstream of 51 tools'],
    ] as const) {
      const load = (check: (text: string, i: number) => boolean) =>
        httpLoad({
          url,
          headers: LIST_HEADERS,
          body: (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list', params: { _meta: META } }),
          check,
          concurrency: 16,
          total: 5_000,
          deadlineMs: 120_000,
        });
      // Warm-up (and, for the gateway, fills the cache): every answer parsed and its 51 tools counted.
      await load((b, i) => {
        try {
          const r = parseAnswer(b);
          return r?.id === i && r.result?.tools?.length === 51;
        } catch {
          return false;
        }
      });
      // Measured: each answer is its own success, checked without parsing 11 KB of JSON per answer in
      // the load generator (that cost the client more than the gateway spends serving the list).
      const result = await load(
        (b, i) =>
          (b.includes(`"id":${i},`) || b.includes(`"id":${i}}`)) && b.includes('"tools":[') && !b.includes('"error":{'),
      );
      lists.push({ key, label, tools: 51, result });
      say(
        `peers: tools/list ${key}: p50 ${result.p50Ms.toFixed(2)} ms, ${result.callsPerSecond.toFixed(0)}/s, ` +
          `${result.errors} errors`,
      );
    }
    notes.push(
      'mcp-proxy and supergateway both answered the modern (2026-07-28) stateless request as sent to the gateway ' +
        '(same headers and body); no session or initialize was needed.',
      `supergateway starts a child (node + tsx, the fixture) per request: ` +
        `${options.concurrency.map((c) => `${supergatewayCalls(c, options.concurrency)} calls at ${c}`).join(', ')} ` +
        `instead of ${options.total}; it ran with --logLevel none (its default logs every message).`,
      'Runs are interleaved per concurrency (floor, gateway, mcp-proxy, stdio, supergateway), after a 2,000-call ' +
        'warm-up of each fast HTTP path; the stdio child is a fresh one per run with a 2,000-call warm-up.',
    );
  } finally {
    for (const child of started.reverse()) await stopTree(child); // already stopped ones return at once
  }
  return { rows, lists, commands, rssMb: rss, notes };
}
