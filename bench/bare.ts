// npm run bench -- bare: a yardstick for issue 21's hop and pool targets. bench/bare-proxy.mjs is the least
// any Node.js HTTP → stdio proxy does (node:http, one parse each way, ids swapped, nothing else); it runs
// beside the HTTP floor and the gateway on the same load, so each target reads against what no Node.js
// proxy can go below on this machine. No verdict of its own: the figures say how far the gateway is from
// the bare proxy, and how far the bare proxy is from each target.
//   hop:  CPU per call of each HTTP process at 16 clients, echo on the SDK v2 stdio fixture (as in peers);
//   pool: calls/s with one and two children of the CPU-bound fixture (as in pool), 16 clients;
//   and the hop again, gateway over bare proxy, pinned and in ABBA blocks as bench:ab measures (bare-pinned.ts),
//   whose interval is narrow enough to hold against issue 32's ×1.15 (BENCH_BARE_PAIRS, 6; 0 skips it;
//   BENCH_BARE_WARMUP calls to each process first, 30,000).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatRatio, median } from './ab-stats.js';
import { cpuNs } from './ab-gateways.js';
import { gatewayEntry, removeBuild } from './build.js';
import { pinnedHop, type PinnedHop } from './bare-pinned.js';
import { httpLoad } from './load.js';
import { spawnServer, startConfiguredGateway, stopTree, waitFor } from './procs.js';
import { META, mcpHeaders } from './wire.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const node = process.execPath;
const CLIENTS = 16;
const ECHO = ['--import', 'tsx', path.join(ROOT, 'test/fixtures/modern-server.ts')];
const BURN = [path.join(ROOT, 'bench/cpu-server.mjs')];

type Kind = 'floor' | 'bare' | 'gateway';
interface Running {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export interface BareFigures {
  /** Per round: CPU µs per call of each HTTP process at 16 clients. */
  hop: Record<Kind, number>[];
  /** Per round: calls/s with 1 and 2 children, bare proxy and gateway. */
  pool: { bare: [number, number]; gateway: [number, number] }[];
  /** The hop pinned and in ABBA blocks (bare-pinned.ts); absent when BENCH_BARE_PAIRS is 0. */
  pinned?: PinnedHop;
}

async function byPort(args: string[]): Promise<Running> {
  const s = spawnServer(node, args, { cwd: ROOT, env: { ...process.env, BURN_MS: '2' } });
  let port = 0;
  await waitFor(
    args[0]!,
    async () => ((port = Number(/listening (\d+)/.exec(s.log())?.[1] ?? 0)), port > 0),
    30_000,
    s.log,
  );
  return { url: `http://127.0.0.1:${port}/mcp`, pid: s.process.pid!, stop: () => stopTree(s.process) };
}

async function gateway(upstream: string[], instances: number): Promise<Running> {
  const server = {
    command: node,
    args: upstream,
    cwd: ROOT,
    env: { BURN_MS: '2' },
    era: 'modern',
    instances,
    maxInFlight: CLIENTS,
  };
  const { base, process: child } = await startConfiguredGateway(
    gatewayEntry(),
    { listen: { port: 0 }, log: { level: 'info' }, servers: { s: server } },
    { cwd: ROOT },
  );
  return { url: `${base}/servers/s/mcp`, pid: child.pid!, stop: () => stopTree(child) };
}

function start(kind: Kind, upstream: string[], instances = 1): Promise<Running> {
  if (kind === 'floor') return byPort([path.join(ROOT, 'bench/floor-server.mjs')]);
  if (kind === 'bare') return byPort([path.join(ROOT, 'bench/bare-proxy.mjs'), String(instances), node, ...upstream]);
  return gateway(upstream, instances);
}

/** Warm-up, then `total` calls of `tool` at 16 clients: calls/s and the HTTP process's CPU µs per call. */
async function measure(running: Running, tool: string, total: number): Promise<{ rate: number; cpuUs: number }> {
  const headers = mcpHeaders('tools/call', tool);
  const load = (calls: number) =>
    httpLoad({
      url: running.url,
      headers,
      body: (i) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: tool, arguments: { text: `t${i}` }, _meta: META },
        }),
      check: (text, i) => {
        const answer = JSON.parse(text);
        return answer.id === i && answer.result?.content?.[0]?.text !== undefined;
      },
      concurrency: CLIENTS,
      total: calls,
      deadlineMs: 120_000,
    });
  try {
    await load(Math.min(2_000, total));
    const before = cpuNs(running.pid);
    const result = await load(total);
    if (result.errors) throw new Error(`${result.errors} errors of ${total} calls at ${running.url}`);
    return { rate: result.callsPerSecond, cpuUs: (cpuNs(running.pid) - before) / 1e3 / result.calls };
  } finally {
    await running.stop();
  }
}

export async function bareBench(options: { rounds?: number; log?: (line: string) => void } = {}): Promise<BareFigures> {
  const rounds = options.rounds ?? Number(process.env.BENCH_BARE_ROUNDS ?? 3);
  const say = options.log ?? (() => {});
  const figures: BareFigures = { hop: [], pool: [] };
  for (let round = 0; round < rounds; round++) {
    const hop = {} as Record<Kind, number>;
    for (const kind of ['floor', 'bare', 'gateway'] as const)
      hop[kind] = (await measure(await start(kind, ECHO), 'echo', 20_000)).cpuUs;
    figures.hop.push(hop);
    say(
      `bare: hop round ${round + 1}: CPU µs per call floor ${hop.floor.toFixed(1)}, bare proxy ` +
        `${hop.bare.toFixed(1)}, gateway ${hop.gateway.toFixed(1)}`,
    );
    const rate = async (kind: 'bare' | 'gateway', instances: number) =>
      (await measure(await start(kind, BURN, instances), 'burn', 3_000)).rate;
    const pool = {
      bare: [await rate('bare', 1), await rate('bare', 2)],
      gateway: [await rate('gateway', 1), await rate('gateway', 2)],
    } as BareFigures['pool'][number];
    figures.pool.push(pool);
    say(
      `bare: pool round ${round + 1}: bare proxy ${pool.bare.map((r) => r.toFixed(0)).join(' → ')}, gateway ` +
        `${pool.gateway.map((r) => r.toFixed(0)).join(' → ')} calls/s`,
    );
  }
  if (Number(process.env.BENCH_BARE_PAIRS ?? 6) > 0) {
    figures.pinned = await pinnedHop(gatewayEntry());
    say(`bare: hop pinned, gateway over the bare proxy ${formatRatio(figures.pinned.ratio)}`);
  }
  return figures;
}

export function bareTable(figures: BareFigures): string[] {
  const f = (n: number, digits = 2) => n.toFixed(digits);
  const hop = (kind: Kind) => median(figures.hop.map((round) => round[kind] / round.floor));
  // Issue 32's restated hop target reads against the bare proxy of the same round, not the floor.
  const overBare = median(figures.hop.map((round) => round.gateway / round.bare));
  const pool = (kind: 'bare' | 'gateway') => median(figures.pool.map((round) => round[kind][1] / round[kind][0]));
  return [
    'The least any Node.js HTTP → stdio proxy does (`bench/bare-proxy.mjs`: node:http, one JSON parse each way, ids ' +
      'swapped, nothing else) beside the HTTP floor and the gateway, same load (16 clients). Medians of per-round ' +
      'ratios:',
    '',
    '| round | floor CPU µs/call | bare proxy | gateway | pool: bare 1 → 2 calls/s | gateway 1 → 2 |',
    '| ---: | ---: | ---: | ---: | ---: | ---: |',
    ...figures.hop.map((h, i) => {
      const p = figures.pool[i]!;
      return (
        `| ${i + 1} | ${f(h.floor, 1)} | ${f(h.bare, 1)} | ${f(h.gateway, 1)} | ` +
        `${p.bare.map((r) => f(r, 0)).join(' → ')} | ${p.gateway.map((r) => f(r, 0)).join(' → ')} |`
      );
    }),
    '',
    `Hop, CPU per call over the floor's: bare proxy ×${f(hop('bare'))}, gateway ×${f(hop('gateway'))} (issue 21's ` +
      `target ≤ 1.25); gateway over the bare proxy ×${f(overBare)} (unpinned rounds; issue 32's target ≤ 1.15, read ` +
      `pinned below). Pool, 2 children over 1: bare proxy ×${f(pool('bare'))}, gateway ×${f(pool('gateway'))} ` +
      `(target ≥ 1.7).`,
    ...(figures.pinned
      ? [
          '',
          `Hop, pinned as bench:ab pins (proxy on CPU 1, its child and the load on CPU 0; ABBA blocks of 2,000 ` +
            `calls, ${figures.pinned.ratio.n / 4} process pairs${figures.pinned.pinned ? '' : ', taskset FAILED'}): ` +
            `bare proxy ${figures.pinned.bareUs.toFixed(1)} µs, gateway ${figures.pinned.gatewayUs.toFixed(1)} µs ` +
            `CPU per call; gateway over the bare proxy ${formatRatio(figures.pinned.ratio)} (issue 32's target ≤ ` +
            `1.15).`,
        ]
      : []),
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  try {
    console.log(bareTable(await bareBench({ log: (line) => console.error(line) })).join('\n'));
  } finally {
    removeBuild();
  }
}
