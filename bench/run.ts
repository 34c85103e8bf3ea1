// npm run bench — (1) tools/call through the gateway's stdio bridge against the same call straight over
// stdio, on the same upstream (the SDK v2 echo fixture) and the same load; (2) /mcp with 10 and 100
// upstreams of 50 tools. Writes bench/results/latest.{md,json}. Loopback only; every loop is bounded.
// (3) aggregated tools/list uncached vs cached in memory and in Redis.
// `npm run bench -- bridge`, `-- aggregate` or `-- cache` runs one part.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { aggregateBench, aggregateTable, cacheBench, cacheTable, type AggregateRow, type CacheRow } from './aggregate.js';
import { httpLoad, type LoadResult } from './load.js';
import { stdioLoad } from './stdio-direct.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const TOTAL = Number(process.env.BENCH_CALLS ?? 20_000);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map(Number);
const upstream = { command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/modern-server.ts'] };

const echo = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `payload-${id}` }, _meta: META } });
const echoed = (response: any, id: number) => response?.result?.content?.[0]?.text === `payload-${id}` && response.id === id;

interface BridgeRow {
  path: string;
  concurrency: number;
  result: LoadResult;
}

async function startBridge(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--stdio', `${upstream.command} ${upstream.args.join(' ')}`, '--name', 'echo', '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${log}`)), 20_000);
    const onData = (chunk: Buffer): void => {
      log += chunk.toString('utf8');
      const match = /"endpoint":"([^"]+\/servers\/echo\/mcp)"/.exec(log);
      if (!match) return;
      clearTimeout(timer);
      child.stderr!.off('data', onData);
      child.stderr!.resume(); // keep draining the log so the gateway never blocks on it
      resolve(match[1]!);
    };
    child.stderr!.on('data', onData);
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function bridgeBench(): Promise<BridgeRow[]> {
  const rows: BridgeRow[] = [];
  const gateway = await startBridge();
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'echo',
  };
  const viaGateway = (concurrency: number, total: number) =>
    httpLoad({ url: gateway.url, headers, body: (i) => JSON.stringify(echo(i)), check: (text, i) => echoed(JSON.parse(text), i), concurrency, total });
  await viaGateway(16, 2_000); // warm-up: the child's era probe, JIT, connections
  for (const concurrency of CONCURRENCY) rows.push({ path: 'gateway (HTTP → stdio bridge)', concurrency, result: await viaGateway(concurrency, TOTAL) });
  gateway.stop();
  for (const concurrency of CONCURRENCY) {
    const result = await stdioLoad({ ...upstream, cwd: ROOT, message: echo, check: echoed, concurrency, total: TOTAL, warmup: 2_000 });
    rows.push({ path: 'stdio direct', concurrency, result });
  }
  return rows;
}

function bridgeTable(rows: BridgeRow[]): string[] {
  const f = (n: number, digits = 2) => n.toFixed(digits);
  const find = (c: number, gateway: boolean) => rows.find((r) => r.concurrency === c && r.path.startsWith('gateway') === gateway)!.result;
  return [
    '| path | clients | p50 ms | p99 ms | calls/s | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(({ path, concurrency, result: r }) => `| ${path} | ${concurrency} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${f(r.callsPerSecond, 0)} | ${r.errors} |`),
    '',
    'Ratios (gateway ÷ stdio direct):',
    ...CONCURRENCY.map((c) => `- ${c} clients: p50 ×${f(find(c, true).p50Ms / find(c, false).p50Ms, 1)}, throughput ×${f(find(c, true).callsPerSecond / find(c, false).callsPerSecond, 2)}`),
  ];
}

const parts = process.argv.slice(2);
const runs = (part: string) => parts.length === 0 || parts.includes(part);
const lines = [`# mcp-gateway benchmarks (${new Date().toISOString()}, Node ${process.version})`, ''];
let bridge: BridgeRow[] = [];
let aggregate: AggregateRow[] = [];
let cache: CacheRow[] = [];
if (runs('bridge')) {
  bridge = await bridgeBench();
  lines.push(`## tools/call: stdio bridge vs stdio direct (${TOTAL} calls per row)`, '', ...bridgeTable(bridge), '');
}
if (runs('aggregate')) {
  aggregate = await aggregateBench([10, 100]);
  lines.push('## /mcp aggregation: synthetic modern stdio upstreams, 50 tools each', '', ...aggregateTable(aggregate), '');
}
if (runs('cache')) {
  cache = await cacheBench();
  lines.push('## Aggregated tools/list on /mcp: 3 upstreams, 39 tools', '', ...cacheTable(cache), '');
}
mkdirSync(`${ROOT}bench/results`, { recursive: true });
writeFileSync(`${ROOT}bench/results/latest.md`, lines.join('\n') + '\n');
writeFileSync(`${ROOT}bench/results/latest.json`, JSON.stringify({ date: new Date().toISOString(), node: process.version, calls: TOTAL, bridge, aggregate, cache }, null, 2));
console.log(lines.join('\n'));
