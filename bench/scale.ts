// npm run bench -- scale: what grows with the number of stdio upstreams (issue 21, items 4 and 5).
// (1) Routing: sequential tools/call p50 to the LAST of 100 upstreams (50 tools each) against the same
//     call to the last of 3, through /mcp, both gateways running side by side and measured in alternating
//     rounds (the machine is shared and noisy: each round gives a ratio, the verdict reads their median).
// (2) Idle RSS of the gateway process with 10 and 100 upstreams.
// (3) Start-up: spawn to /readyz 200 with 100 upstreams, against spawning the same 100 children directly
//     and getting one answer (server/discover) from each; alternating rounds again.
// The compiled build (bench/build.ts). Loopback only; bounded runs.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnvironment } from '../src/child-env.js';
import { startGateway } from './aggregate.js';
import { median } from './ab-stats.js';
import { gatewayEntry } from './build.js';
import { httpLoad, type LoadResult } from './load.js';
import { loadAverages, rssMb, stopTree } from './procs.js';
import { META, mcpHeaders } from './wire.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TOOLS_EACH = 50;
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 5);
const CALLS_PER_ROUND = Number(process.env.BENCH_SCALE_CALLS ?? 2_000);
const STARTS = Number(process.env.BENCH_SCALE_STARTS ?? 3);
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ScaleResult {
  /** Per round: p50 ms with 3 and with 100 upstreams, and their ratio. */
  routing: { few: LoadResult; many: LoadResult; ratio: number }[];
  idleMb: { upstreams: number; rssMb: number }[];
  /** Per round: ms from spawn to /readyz 200 (gateway) and to one answer from each of 100 children (direct). */
  startup: { gatewayMs: number; directMs: number; ratio: number }[];
  load: string;
}

/** `calls` sequential tools/call to the last upstream of a gateway with `upstreams` of them. */
function callLast(url: string, upstreams: number, calls: number): Promise<LoadResult> {
  const server = `s${upstreams - 1}`;
  const name = (i: number) => `${server}__tool-${i % TOOLS_EACH}`;
  return httpLoad({
    url,
    headers: (i) => mcpHeaders('tools/call', name(i)),
    body: (i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: name(i), arguments: { text: `p${i}` }, _meta: META },
      }),
    check: (text, i) => JSON.parse(text).result?.content?.[0]?.text === `${server}/tool-${i % TOOLS_EACH}: p${i}`,
    concurrency: 1,
    total: calls,
    deadlineMs: 120_000,
  });
}

async function routingAndIdle(say: (line: string) => void): Promise<Pick<ScaleResult, 'routing' | 'idleMb'>> {
  const idleMb: ScaleResult['idleMb'] = [];
  const ten = await startGateway(10, TOOLS_EACH, { entry: gatewayEntry() });
  await wait(3_000);
  idleMb.push({ upstreams: 10, rssMb: rssMb(ten.process.pid!) });
  await stopTree(ten.process);
  const few = await startGateway(3, TOOLS_EACH, { entry: gatewayEntry() });
  const many = await startGateway(100, TOOLS_EACH, { entry: gatewayEntry() });
  try {
    await wait(3_000);
    idleMb.push({ upstreams: 100, rssMb: rssMb(many.process.pid!) });
    say(`scale: idle RSS ${idleMb.map((m) => `${m.rssMb.toFixed(1)} MB with ${m.upstreams}`).join(', ')}`);
    await callLast(few.url, 3, 1_000); // warm-up: the child's answers, the route, JIT
    await callLast(many.url, 100, 1_000);
    const routing: ScaleResult['routing'] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so a drift in the machine's load falls on both.
      const order = round % 2 === 0 ? [few, many] : [many, few];
      const results = new Map<unknown, LoadResult>();
      for (const gateway of order)
        results.set(gateway, await callLast(gateway.url, gateway === few ? 3 : 100, CALLS_PER_ROUND));
      const a = results.get(few)!,
        b = results.get(many)!;
      routing.push({ few: a, many: b, ratio: b.p50Ms / a.p50Ms });
      say(
        `scale: routing round ${round + 1}: p50 ${a.p50Ms.toFixed(3)} ms (3) vs ${b.p50Ms.toFixed(3)} ms (100): ` +
          `×${(b.p50Ms / a.p50Ms).toFixed(3)}`,
      );
    }
    return { routing, idleMb };
  } finally {
    await stopTree(few.process);
    await stopTree(many.process);
  }
}

const get = (url: string): Promise<number> =>
  new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
  });

/** ms from spawning the gateway with 100 upstreams to its first /readyz 200 (polled every 10 ms). */
async function gatewayStart(): Promise<number> {
  const began = performance.now();
  const gateway = await startGateway(100, TOOLS_EACH, { entry: gatewayEntry() });
  try {
    const ready = new URL('/readyz', gateway.url).href;
    for (let i = 0; i < 6_000; i++) {
      if ((await get(ready)) === 200) return performance.now() - began;
      await wait(10);
    }
    throw new Error('the gateway with 100 upstreams was not ready within 60 s');
  } finally {
    await stopTree(gateway.process);
  }
}

/**
 * ms from spawning the same 100 children at once to one server/discover answer from each, measured inside a
 * plain Node process (bench/spawn-direct.mjs) with the environment the gateway gives each child.
 */
async function directStart(): Promise<number> {
  const env = childEnvironment(process.env, [], new Set(), { LIST_TTL_MS: '60000' }).env;
  const child = spawn(process.execPath, [path.join(ROOT, 'bench/spawn-direct.mjs'), '100', String(TOOLS_EACH)], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ms = Number.parseFloat(out);
  if (code !== 0 || !Number.isFinite(ms))
    throw new Error(`bench/spawn-direct.mjs failed (exit ${code}): ${out.slice(0, 200)}`);
  return ms;
}

export async function scaleBench(options: { log?: (line: string) => void } = {}): Promise<ScaleResult> {
  const say = options.log ?? (() => {});
  const load = loadAverages();
  const { routing, idleMb } = await routingAndIdle(say);
  const startup: ScaleResult['startup'] = [];
  for (let round = 0; round < STARTS; round++) {
    // Alternate which goes first, as for routing.
    let direct: number, gatewayMs: number;
    if (round % 2 === 0) {
      direct = await directStart();
      gatewayMs = await gatewayStart();
    } else {
      gatewayMs = await gatewayStart();
      direct = await directStart();
    }
    startup.push({ gatewayMs, directMs: direct, ratio: gatewayMs / direct });
    say(
      `scale: start-up round ${round + 1}: /readyz after ${gatewayMs.toFixed(0)} ms vs direct ${direct.toFixed(0)} ` +
        `ms: ×${(gatewayMs / direct).toFixed(2)}`,
    );
  }
  return { routing, idleMb, startup, load };
}

const spread = (values: number[], d: number) =>
  `median ${median(values).toFixed(d)} (${Math.min(...values).toFixed(d)}–${Math.max(...values).toFixed(d)})`;

export function scaleTable(result: ScaleResult): string[] {
  const f = (n: number, d = 3) => n.toFixed(d);
  return [
    `Load average at the start (1, 5, 15 min): ${result.load}.`,
    '',
    '| round | 3 upstreams: p50 ms | p99 ms | 100 upstreams: p50 ms | p99 ms | ratio p50 | errors |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...result.routing.map(
      (r, i) =>
        `| ${i + 1} | ${f(r.few.p50Ms)} | ${f(r.few.p99Ms)} | ${f(r.many.p50Ms)} | ${f(r.many.p99Ms)} | ` +
        `×${f(r.ratio)} | ${r.few.errors + r.many.errors} |`,
    ),
    '',
    `Idle RSS of the gateway process: ` +
      `${result.idleMb.map((m) => `${m.rssMb.toFixed(1)} MB with ${m.upstreams} upstreams`).join(', ')}.`,
    '',
    '| round | spawn → /readyz 200, 100 upstreams (ms) | 100 children spawned directly, one answer each (ms) | ratio |',
    '| ---: | ---: | ---: | ---: |',
    ...result.startup.map(
      (s, i) => `| ${i + 1} | ${s.gatewayMs.toFixed(0)} | ${s.directMs.toFixed(0)} | ×${s.ratio.toFixed(2)} |`,
    ),
  ];
}

export const scaleSpread = spread;
