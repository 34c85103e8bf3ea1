// The hop figure of `npm run bench -- bare` measured as bench:ab measures two builds: the bare proxy and the
// gateway each pinned to CPU 1 with its echo child and the load generator on CPU 0, loaded in ABBA/BAAB
// blocks by fresh process pairs, the ratio a median over blocks with a bootstrap interval. Unpinned, the
// three processes of a round share both cores as the scheduler likes, and one round's gateway-over-bare
// ratio has read anywhere from ×1.06 to ×1.47 on a quiet machine: too wide to hold against a 1.15 target.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { abbaPair, cpuNs, startGateway, type Gateway } from './ab-gateways.js';
import { median, summariseRatios, type RatioSummary } from './ab-stats.js';
import { httpLoad } from './load.js';
import { META, mcpHeaders } from './wire.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ECHO = ['--import', 'tsx', path.join(ROOT, 'test/fixtures/modern-server.ts')];
const HEADERS = mcpHeaders('tools/call', 'echo');

export interface PinnedHop {
  /** Gateway CPU per call over the bare proxy's, per block. */
  ratio: RatioSummary;
  /** Median CPU µs per call over all rounds. */
  bareUs: number;
  gatewayUs: number;
  pinned: boolean;
}

async function startBare(): Promise<Gateway> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bench/bare-proxy.mjs'), '1', process.execPath, ...ECHO], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let log = '';
    child.once('exit', (code) => reject(new Error(`the bare proxy exited (${code}) before listening`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
      const port = /listening (\d+)/.exec(log)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}/mcp`);
    });
  });
  return { url, pid: child.pid!, child };
}

/** `calls` tools/call at 16 clients: the process's own CPU µs per call. */
async function round(target: Gateway, calls: number): Promise<number> {
  const before = cpuNs(target.pid);
  const result = await httpLoad({
    url: target.url,
    headers: HEADERS,
    body: (i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: `t${i}` }, _meta: META },
      }),
    check: (text, i) => JSON.parse(text).id === i,
    concurrency: 16,
    total: calls,
    deadlineMs: 120_000,
  });
  if (result.errors) throw new Error(`${result.errors} errors of ${calls} calls at ${target.url}`);
  return (cpuNs(target.pid) - before) / 1e3 / result.calls;
}

/**
 * Calls each process takes before its rounds count. Measured from a cold start (2,000-call rounds, pinned):
 * the bare proxy is steady after about 8,000 calls and the gateway, with far more code to compile, after
 * about 16,000 on Node 20 and 30,000 on Node 24; with 4,000 the first blocks charged the gateway its JIT.
 */
const WARMUP_CALLS = Number(process.env.BENCH_BARE_WARMUP ?? 30_000);

/**
 * `pairs` fresh pairs (bare proxy, gateway `entry`), 4 ABBA blocks each of 2,000-call rounds after WARMUP_CALLS of
 * warm-up.
 */
export async function pinnedHop(entry: string, pairs = Number(process.env.BENCH_BARE_PAIRS ?? 6)): Promise<PinnedHop> {
  const ratios: number[][] = [];
  const cpu: [number[], number[]] = [[], []];
  let pinned = true;
  for (let pair = 0; pair < pairs; pair++) {
    const run = await abbaPair(
      pair,
      [startBare, () => startGateway(entry)],
      { blocks: 4, warmup: WARMUP_CALLS, calls: 2_000, pin: true },
      round,
    );
    pinned = run.pinned === true && pinned;
    ratios.push(run.blocks.map(([bare, gateway]) => (gateway[0]! + gateway[1]!) / (bare[0]! + bare[1]!)));
    for (const [bare, gateway] of run.blocks) {
      cpu[0].push(...bare);
      cpu[1].push(...gateway);
    }
  }
  return { ratio: summariseRatios(ratios), bareUs: median(cpu[0]), gatewayUs: median(cpu[1]), pinned };
}
