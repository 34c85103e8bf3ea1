// npm run bench — (1) tools/call through the gateway's stdio bridge against the same call straight over
// stdio, on the same upstream (the SDK v2 echo fixture) and the same load; (2) /mcp with 10 and 100
// upstreams of 50 tools. Writes bench/results/latest.{md,json}. Loopback only; every loop is bounded.
// (3) aggregated tools/list uncached vs cached in memory and in Redis.
// (4) peers: the gateway vs the HTTP floor, stdio direct, mcp-proxy and supergateway (bench/peers.ts), with
// bench/results/latency.svg; (5) memory: the gateway's RSS idle and over 100k calls (bench/memory.ts);
// (6) policy: what authentication, 100 policies and the audit log add per request (bench/policy.ts); (7) search:
// search mode's tool index at 5,000 tools — recall@5, MRR, latency, memory (bench/search-quality.ts);
// (8) pool: a CPU-bound stdio server with instances: 1 vs 2 at 16 clients (bench/pool.ts);
// (9) scale: routing, idle RSS and start-up as the number of stdio upstreams grows (bench/scale.ts);
// (10) lists: 5,000 tools, resources and prompts from cache against a bare node:http floor (bench/lists.ts);
// (11) bare: the least any Node.js proxy pays (bench/bare-proxy.mjs) beside the floor and the gateway, for the
// hop and pool targets (bench/bare.ts).
// `npm run bench -- bridge`, `-- aggregate`, `-- cache`, `-- peers`, `-- memory`, `-- policy`, `-- search`, `-- pool`,
// `-- scale`, `-- lists` or `-- bare` runs one part (several
// may be named). Parts not run keep their figures from the previous latest.json, marked with their date.
import { spawn } from 'node:child_process';
import { announcedUrl } from './procs.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { aggregateBench, aggregateTable, cacheBench, cacheTable } from './aggregate.js';
import { gatewayEntry, removeBuild } from './build.js';
import { latencySvg } from './chart.js';
import { httpLoad, type LoadResult } from './load.js';
import { memoryBench, memoryTable } from './memory.js';
import { peersBench, type PeersResult } from './peers.js';
import { peersTable } from './peers-table.js';
import { policyBench, policyTable } from './policy.js';
import { searchBench, searchTable } from './search-quality.js';
import { poolBench, poolTable } from './pool.js';
import { scaleBench, scaleTable } from './scale.js';
import { listsBench, listsTable } from './lists.js';
import { bareBench, bareTable } from './bare.js';
import { stdioLoad } from './stdio-direct.js';
import { targetLines, type Figures } from './targets.js';
import { META, mcpHeaders } from './wire.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TOTAL = Number(process.env.BENCH_CALLS ?? 20_000);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map(Number);
const upstream = { command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/modern-server.ts'] };

const echo = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: `payload-${id}` }, _meta: META },
});
const echoed = (response: any, id: number) =>
  response?.result?.content?.[0]?.text === `payload-${id}` && response.id === id;

interface BridgeRow {
  path: string;
  concurrency: number;
  result: LoadResult;
}

async function startBridge(): Promise<{ url: string; stop(): void }> {
  const child = spawn(
    process.execPath,
    [gatewayEntry(), '--stdio', `${upstream.command} ${upstream.args.join(' ')}`, '--name', 'echo', '--port', '0'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const url = await announcedUrl(child, /"endpoint":"([^"]+\/servers\/echo\/mcp)"/, 20_000);
  return { url, stop: () => child.kill('SIGTERM') };
}

async function bridgeBench(): Promise<BridgeRow[]> {
  const rows: BridgeRow[] = [];
  const gateway = await startBridge();
  const headers = mcpHeaders('tools/call', 'echo');
  const viaGateway = (concurrency: number, total: number) =>
    httpLoad({
      url: gateway.url,
      headers,
      body: (i) => JSON.stringify(echo(i)),
      check: (text, i) => echoed(JSON.parse(text), i),
      concurrency,
      total,
    });
  await viaGateway(16, 2_000); // warm-up: the child's era probe, JIT, connections
  for (const concurrency of CONCURRENCY)
    rows.push({ path: 'gateway (HTTP → stdio bridge)', concurrency, result: await viaGateway(concurrency, TOTAL) });
  gateway.stop();
  for (const concurrency of CONCURRENCY) {
    const result = await stdioLoad({
      ...upstream,
      cwd: ROOT,
      message: echo,
      check: echoed,
      concurrency,
      total: TOTAL,
      warmup: 2_000,
    });
    rows.push({ path: 'stdio direct', concurrency, result });
  }
  return rows;
}

function bridgeTable(rows: BridgeRow[]): string[] {
  const f = (n: number, digits = 2) => n.toFixed(digits);
  const find = (c: number, gateway: boolean) =>
    rows.find((r) => r.concurrency === c && r.path.startsWith('gateway') === gateway)!.result;
  return [
    '| path | clients | p50 ms | p99 ms | calls/s | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      ({ path, concurrency, result: r }) =>
        `| ${path} | ${concurrency} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${f(r.callsPerSecond, 0)} | ${r.errors} |`,
    ),
    '',
    'Ratios (gateway ÷ stdio direct):',
    ...CONCURRENCY.map(
      (c) =>
        `- ${c} clients: p50 ×${f(find(c, true).p50Ms / find(c, false).p50Ms, 1)}, throughput ` +
        `×${f(find(c, true).callsPerSecond / find(c, false).callsPerSecond, 2)}`,
    ),
  ];
}

const PARTS = [
  'bridge',
  'aggregate',
  'cache',
  'peers',
  'memory',
  'policy',
  'search',
  'pool',
  'scale',
  'lists',
  'bare',
] as const;
const parts = process.argv.slice(2);
for (const part of parts)
  if (!(PARTS as readonly string[]).includes(part)) throw new Error(`unknown part ${part}; parts: ${PARTS.join(', ')}`);
const runs = (part: string) => parts.length === 0 || parts.includes(part);
const now = new Date().toISOString();
const say = (line: string) => console.error(line);
const RESULTS = `${ROOT}bench/results`;

// The previous figures: parts not run this time keep theirs, with the date they were measured.
let previous: Partial<Figures> & { date?: string; node?: string } = {};
try {
  if (existsSync(`${RESULTS}/latest.json`)) previous = JSON.parse(readFileSync(`${RESULTS}/latest.json`, 'utf8'));
} catch {
  previous = {};
}
const measured: Figures['measured'] = { ...(previous.measured ?? {}) };
const keep = <T>(part: (typeof PARTS)[number], fresh: T | undefined, old: T | undefined, empty: T): T => {
  if (fresh !== undefined) {
    measured[part] = { date: now, node: process.version };
    return fresh;
  }
  const has = Array.isArray(old) ? old.length > 0 : old !== undefined && old !== null;
  if (has && !measured[part] && previous.date) measured[part] = { date: previous.date, node: previous.node ?? '' };
  if (!has) delete measured[part];
  return has ? old! : empty;
};

// A part that fails is reported and left out (keeping its previous figures), not allowed to lose the others'.
const failures: string[] = [];
async function part<T>(name: (typeof PARTS)[number], measure: () => Promise<T>): Promise<T | undefined> {
  if (!runs(name)) return undefined;
  try {
    return await measure();
  } catch (error) {
    say(`${name}: failed: ${(error as Error).stack ?? error}`);
    failures.push(`${name}: ${(error as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

const figures: Figures = {
  date: now,
  node: process.version,
  calls: TOTAL,
  bridge: keep('bridge', await part('bridge', bridgeBench), previous.bridge, []),
  aggregate: keep(
    'aggregate',
    await part('aggregate', () =>
      aggregateBench([
        [1, 10],
        [10, 50],
        [100, 50],
      ]),
    ),
    previous.aggregate,
    [],
  ),
  cache: keep('cache', await part('cache', cacheBench), previous.cache, []),
  peers: keep(
    'peers',
    await part('peers', () => peersBench({ total: TOTAL, concurrency: CONCURRENCY, log: say })),
    previous.peers,
    null,
  ),
  memory: keep(
    'memory',
    await part('memory', () => memoryBench({ calls: Number(process.env.BENCH_MEMORY_CALLS ?? 100_000), log: say })),
    previous.memory,
    null,
  ),
  policy: keep('policy', await part('policy', policyBench), previous.policy, null),
  search: keep(
    'search',
    await part('search', async () => {
      const { misses: _misses, ...figures } = searchBench();
      return figures;
    }),
    previous.search,
    null,
  ),
  pool: keep('pool', await part('pool', () => poolBench({ log: say })), previous.pool, null),
  scale: keep('scale', await part('scale', () => scaleBench({ log: say })), previous.scale, null),
  lists: keep('lists', await part('lists', () => listsBench({ log: say })), previous.lists, null),
  bare: keep('bare', await part('bare', () => bareBench({ log: say })), previous.bare, null),
  measured,
  targets: [],
};
removeBuild();

const when = (part: (typeof PARTS)[number]) =>
  measured[part] && measured[part]!.date !== now ? ` — from an earlier run (${measured[part]!.date})` : '';
mkdirSync(RESULTS, { recursive: true }); // a fresh clone has no results folder yet
const lines = [`# mcp-gateway benchmarks (${now}, Node ${process.version})`, ''];
lines.push(
  `Parts run now: ${PARTS.filter(runs).join(', ')}. Machine: ${(await import('node:os')).cpus().length} cores, ` +
    `shared — compare ratios, not absolute times.`,
  '',
);
if (figures.bridge.length)
  lines.push(
    `## tools/call: stdio bridge vs stdio direct (${TOTAL} calls per row)${when('bridge')}`,
    '',
    ...bridgeTable(figures.bridge),
    '',
  );
if (figures.aggregate.length)
  lines.push(
    `## /mcp aggregation: synthetic modern stdio upstreams (1 × 10, 10 × 50 and 100 × 50 tools)${when('aggregate')}`,
    '',
    ...aggregateTable(figures.aggregate),
    '',
  );
if (figures.cache.length)
  lines.push(
    `## Aggregated tools/list on /mcp: 3 upstreams, 39 tools${when('cache')}`,
    '',
    ...cacheTable(figures.cache),
    '',
  );
if (figures.peers) {
  lines.push(
    `## tools/call of echo, side by side: gateway, HTTP floor, stdio direct, mcp-proxy, supergateway${when('peers')}`,
    '',
    ...peersTable(figures.peers),
    '',
    '![p50 latency vs concurrency](latency.svg)',
    '',
  );
  writeFileSync(`${RESULTS}/latency.svg`, chart(figures.peers));
}
if (figures.pool)
  lines.push(
    `## Child pool: a CPU-bound stdio server, one child vs instances: 2${when('pool')}`,
    '',
    ...poolTable(figures.pool),
    '',
  );
if (figures.memory)
  lines.push(
    `## Gateway RSS: ${figures.memory.upstreams} upstreams × ${figures.memory.toolsEach} tools, idle then ` +
      `${figures.memory.calls} tools/call on /mcp (16 clients)${when('memory')}`,
    '',
    ...memoryTable(figures.memory),
    '',
  );
if (figures.scale)
  lines.push(
    `## Scale: tools/call to the last of 3 vs 100 upstreams, idle RSS, start-up with 100 upstreams${when('scale')}`,
    '',
    ...scaleTable(figures.scale),
    '',
  );
if (figures.lists)
  lines.push(
    `## Big lists from cache at one client: 5,000 tools, resources and prompts, all pages, vs a bare node:http ` +
      `server${when('lists')}`,
    '',
    ...listsTable(figures.lists),
    '',
  );
if (figures.bare)
  lines.push(
    `## Yardstick: the least any Node.js proxy pays, for the hop and pool targets${when('bare')}`,
    '',
    ...bareTable(figures.bare),
    '',
  );
if (figures.policy)
  lines.push(
    `## Policy: API key, 100 policies, audit log, over 5,000 tools on /mcp${when('policy')}`,
    '',
    ...policyTable(figures.policy),
    '',
  );
if (figures.search)
  lines.push(
    `## Search mode's tool index: ${figures.search.tools} tools (real fixtures + seeded distractors), ` +
      `${figures.search.queries} labelled queries${when('search')}`,
    '',
    ...searchTable(figures.search),
    '',
    'Targets (issue 18): recall@5 ≥ 0.9, p50 ≤ 2 ms, index ≤ 20 MB.',
    '',
  );
const targets = targetLines(figures);
figures.targets = targets.items;
lines.push('## Targets (issues 8 and 21)', '', ...targets.lines, '');
if (failures.length) lines.push('## Parts that failed this run', '', ...failures.map((f) => `- ${f}`), '');
writeFileSync(`${RESULTS}/latest.md`, lines.join('\n') + '\n');
writeFileSync(`${RESULTS}/latest.json`, JSON.stringify(figures, null, 2));
console.log(lines.join('\n'));

function chart(peers: PeersResult): string {
  const levels = [...new Set(peers.rows.map((r) => r.concurrency))];
  const line = (key: string) =>
    levels.map(
      (c) => [c, peers.rows.find((r) => r.key === key && r.concurrency === c)?.result.p50Ms ?? NaN] as [number, number],
    );
  const sg = line('supergateway');
  return latencySvg({
    title: 'tools/call echo: p50 latency vs concurrent clients',
    subtitle:
      `same upstream (SDK v2 stdio fixture), node:http keep-alive client, ` +
      `${now.slice(0, 16).replace('T', ' ')} UTC, ${process.version}`,
    series: [
      { label: 'stdio direct (no HTTP)', color: '#7f7f7f', points: line('stdio'), dashed: true },
      { label: 'HTTP floor (bare node:http)', color: '#2ca02c', points: line('floor'), dashed: true },
      { label: 'mcp-gateway', color: '#1f77b4', points: line('gateway') },
      { label: 'mcp-proxy 6.7.19', color: '#d62728', points: line('mcp-proxy') },
    ],
    notes: [
      'supergateway 4.0.0 (off the chart: a child per request)',
      `  p50 ms: ${sg.map(([c, ms]) => `${Number.isFinite(ms) ? ms.toFixed(0) : '–'} @${c}`).join(', ')}`,
      `  (${levels
        .map((c) => peers.rows.find((r) => r.key === 'supergateway' && r.concurrency === c)?.result.calls ?? 0)
        .join(' / ')} calls)`,
    ],
  });
}
