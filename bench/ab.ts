// npm run bench:ab -- REV_A [REV_B] — is a change free on the hot path? Builds two revisions of the gateway
// (REV_B defaults to the work tree as it stands; the same revision twice is the A/A control that shows the
// noise floor), runs each on its own stdio echo upstream, and loads them in turn with tools/call at 16
// clients. The figure compared is the gateway process's own CPU per call (all its threads, from schedstat),
// which stays steady when latency does not; calls/s and p50 are shown beside it.
// Fair by construction, because on a 2-core machine neither position nor process is neutral:
// - rounds come in blocks of four, ABBA then BAAB, and each block gives one ratio (B1+B2)/(A1+A2);
// - a pair of gateway processes serves only some blocks: BENCH_PAIRS fresh pairs (started in alternating
//   order) share the blocks, because one process's JIT and heap layout can sit a few percent off another's
//   of the same build for its whole life;
// - the ratio reported is the median over all blocks with a 95% interval from a bootstrap that resamples
//   process pairs, then blocks (so it includes the pair-to-pair spread), and the blocks' min–max.
// - each gateway runs on CPU 1, its upstream child and the load generator on CPU 0 (taskset): unpinned,
//   the gateway competes with its own load for a core and an A/A run's blocks spread ×0.5–×1.4 on a busy
//   machine; pinned, ×0.90–×1.06. BENCH_PIN=0 leaves scheduling to the kernel.
// Other users' work still lands on both cores (nice does not reach across sessions when the kernel groups
// tasks by session, /proc/sys/kernel/sched_autogroup_enabled): run the A/A control beside any verdict.
// Env: BENCH_PAIRS (6), BENCH_BLOCKS per pair (4), BENCH_CALLS per round (2,000), BENCH_WARMUP calls per
// gateway (4,000), BENCH_CONCURRENCY (16), BENCH_PIN (1), BENCH_JSON (a file to write the figures to).
// Commit builds are cached in $TMPDIR/gateway-ab-builds/<sha>. Loopback only.
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { abbaPair, build, removeScratch, startGateway, cpuNs, type Gateway } from './ab-gateways.js';
import { formatRatio, median, summariseRatios } from './ab-stats.js';
import { httpLoad } from './load.js';
import { META, mcpHeaders } from './wire.js';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 6);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4);
const CALLS = Number(process.env.BENCH_CALLS ?? 2_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 4_000);
const CLIENTS = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PIN = process.env.BENCH_PIN !== '0' && availableParallelism() >= 2;
const HEADERS = mcpHeaders('tools/call', 'echo');

interface Sample {
  cpuUs: number;
  callsPerSecond: number;
  p50Ms: number;
  errors: number;
}

async function round(g: Gateway, calls: number): Promise<Sample> {
  const before = cpuNs(g.pid);
  const result = await httpLoad({
    url: g.url,
    headers: HEADERS,
    body: (i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: `payload-${i}` }, _meta: META },
      }),
    check: (text, i) => text.includes(`"payload-${i}"`),
    concurrency: CLIENTS,
    total: calls,
  });
  return {
    cpuUs: (cpuNs(g.pid) - before) / 1e3 / Math.max(1, result.calls),
    callsPerSecond: result.callsPerSecond,
    p50Ms: result.p50Ms,
    errors: result.errors,
  };
}

const [revA, revB = 'worktree'] = process.argv.slice(2);
if (!revA)
  throw new Error(
    'usage: npm run bench:ab -- REV_A [REV_B]   (REV_B defaults to the work tree; REV_A twice is the A/A control)',
  );
const say = (line: string) => console.error(line);
const builds = [build(revA), build(revB)];
const samples: [Sample[], Sample[]] = [[], []];
const blocks: Array<{ pair: number; cpu: number; rate: number; p50: number }> = [];
let pinned: boolean | undefined;

try {
  for (let pair = 0; pair < PAIRS; pair++) {
    const start = [() => startGateway(builds[0]!.entry), () => startGateway(builds[1]!.entry)] as const;
    const run = await abbaPair(pair, start, { blocks: BLOCKS, warmup: WARMUP, calls: CALLS, pin: PIN }, round);
    pinned = run.pinned;
    for (const got of run.blocks) {
      const sum = (k: 0 | 1, f: (s: Sample) => number) => got[k].reduce((n, s) => n + f(s), 0);
      blocks.push({
        pair,
        cpu: sum(1, (s) => s.cpuUs) / sum(0, (s) => s.cpuUs),
        rate: sum(1, (s) => s.callsPerSecond) / sum(0, (s) => s.callsPerSecond),
        p50: sum(1, (s) => s.p50Ms) / sum(0, (s) => s.p50Ms),
      });
      samples[0].push(...got[0]);
      samples[1].push(...got[1]);
    }
    say(
      `pair ${pair + 1}/${PAIRS}: CPU B÷A median ` +
        `×${median(blocks.filter((x) => x.pair === pair).map((x) => x.cpu)).toFixed(3)}`,
    );
  }
} finally {
  removeScratch(builds);
}

const label = (k: number) => (revA === revB ? `${builds[k]!.label} (${'AB'[k]})` : builds[k]!.label);
const byPair = (f: (x: (typeof blocks)[number]) => number) =>
  Array.from({ length: PAIRS }, (_, p) => blocks.filter((x) => x.pair === p).map(f));
const cpu = summariseRatios(byPair((x) => x.cpu));
const rate = summariseRatios(byPair((x) => x.rate));
const p50 = summariseRatios(byPair((x) => x.p50));
console.log(
  `| build | gateway CPU µs/call | calls/s | p50 ms | errors |  (${PAIRS} process pairs × ${BLOCKS} ABBA blocks × 4 ` +
    `rounds × ${CALLS} calls, ${CLIENTS} clients, medians of ` +
    `rounds${PIN ? `, pinned: ${pinned ? 'gateway CPU 1, rest CPU 0' : 'taskset FAILED'}` : ''})`,
);
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const k of [0, 1]) {
  const s = samples[k as 0 | 1];
  console.log(
    `| ${label(k)} | ${median(s.map((x) => x.cpuUs)).toFixed(1)} | ` +
      `${median(s.map((x) => x.callsPerSecond)).toFixed(0)} | ${median(s.map((x) => x.p50Ms)).toFixed(3)} | ` +
      `${s.reduce((n, x) => n + x.errors, 0)} |`,
  );
}
console.log(
  `\nB ÷ A, per ABBA block:\n- gateway CPU per call ${formatRatio(cpu)}\n- calls/s ${formatRatio(rate)}\n- p50 ` +
    `${formatRatio(p50)}`,
);
console.log(
  `- per process pair (CPU): ${Array.from(
    { length: PAIRS },
    (_, p) => `×${median(blocks.filter((x) => x.pair === p).map((x) => x.cpu)).toFixed(3)}`,
  ).join(', ')}`,
);
if (process.env.BENCH_JSON)
  writeFileSync(
    process.env.BENCH_JSON,
    JSON.stringify({ revA, revB, pin: PIN, pairs: PAIRS, blocks, samples, cpu, rate, p50 }, null, 1),
  );
