// npm run bench — tools/call through the gateway's stdio bridge against the same call straight over stdio,
// on the same upstream (the SDK v2 echo fixture) and the same load. Writes bench/results/latest.{md,json}.
// Loopback only; every loop is bounded by a call count.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { httpLoad, type LoadResult } from './load.js';
import { stdioLoad } from './stdio-direct.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const TOTAL = Number(process.env.BENCH_CALLS ?? 20_000);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map(Number);
const upstream = { command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/modern-server.ts'] };

const echo = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `payload-${id}` }, _meta: META } });
const echoed = (response: any, id: number) => response?.result?.content?.[0]?.text === `payload-${id}` && response.id === id;

async function startGateway(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--stdio', `${upstream.command} ${upstream.args.join(' ')}`, '--name', 'echo', '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${log}`)), 20_000);
    const onData = (chunk: Buffer): void => {
      log += chunk.toString('utf8');
      const match = /"endpoint":"([^"]+)"/.exec(log);
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

const rows: { path: string; concurrency: number; result: LoadResult }[] = [];

const gateway = await startGateway();
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
for (const concurrency of CONCURRENCY) {
  rows.push({ path: 'gateway (HTTP → stdio bridge)', concurrency, result: await viaGateway(concurrency, TOTAL) });
}
gateway.stop();

for (const concurrency of CONCURRENCY) {
  const result = await stdioLoad({ ...upstream, cwd: ROOT, message: echo, check: echoed, concurrency, total: TOTAL, warmup: 2_000 });
  rows.push({ path: 'stdio direct', concurrency, result });
}

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const lines = [
  `# tools/call benchmark (${new Date().toISOString()}, Node ${process.version}, ${TOTAL} calls per row)`,
  '',
  '| path | clients | p50 ms | p99 ms | calls/s | errors |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(({ path, concurrency, result: r }) => `| ${path} | ${concurrency} | ${fmt(r.p50Ms)} | ${fmt(r.p99Ms)} | ${fmt(r.callsPerSecond, 0)} | ${r.errors} |`),
  '',
  'Ratios (gateway ÷ stdio direct):',
  ...CONCURRENCY.map((c) => {
    const g = rows.find((r) => r.concurrency === c && r.path.startsWith('gateway'))!.result;
    const s = rows.find((r) => r.concurrency === c && r.path === 'stdio direct')!.result;
    return `- ${c} clients: p50 ×${fmt(g.p50Ms / s.p50Ms, 1)}, throughput ×${fmt(g.callsPerSecond / s.callsPerSecond, 2)}`;
  }),
];
mkdirSync(`${ROOT}bench/results`, { recursive: true });
writeFileSync(`${ROOT}bench/results/latest.md`, lines.join('\n') + '\n');
writeFileSync(`${ROOT}bench/results/latest.json`, JSON.stringify({ date: new Date().toISOString(), node: process.version, calls: TOTAL, rows }, null, 2));
console.log(lines.join('\n'));
