// npm run bench:idle -- REV_A [REV_B] — what an idle gateway holds: RSS (VmRSS of the gateway process, not its
// children) 30 s after its endpoint is up, with 10 and 100 stdio upstreams (test/fixtures/synthetic-server.mjs,
// 50 tools each) and nothing else configured, for two revisions built as bench:ab builds them (REV_B defaults
// to the work tree as it stands). Each round starts both revisions' gateways at once on the same shape (in
// alternating order), so the two are read on the same machine under the same load; the figure is the median
// over rounds. Why several rounds: whether V8 has given back the young generation that start-up grew is up to
// its memory reducer, which in our runs had done so 30 s after start in some runs and not in others (about
// 16 MB apart), so one reading says little. Env: BENCH_ROUNDS (5), BENCH_IDLE_MS (30,000), BENCH_SHAPES
// (upstream counts, "10,100"), BENCH_JSON (a file to write the figures to). Loopback only.
import { writeFileSync } from 'node:fs';
import { startGateway } from './aggregate.js';
import { build, removeScratch } from './ab-gateways.js';
import { median } from './ab-stats.js';
import { loadAverages, rssMb, stopTree } from './procs.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 30_000);
const SHAPES = (process.env.BENCH_SHAPES ?? '10,100').split(',').map(Number);
const TOOLS_EACH = 50;

const [revA, revB = 'worktree'] = process.argv.slice(2);
if (!revA) throw new Error('usage: npm run bench:idle -- REV_A [REV_B]   (REV_B defaults to the work tree)');
const say = (line: string) => console.error(line);
const builds = [build(revA), build(revB)];
/** RSS in MB per shape, per build (A, B), one reading per round. */
const readings = new Map(SHAPES.map((upstreams) => [upstreams, [[], []] as [number[], number[]]]));

/** Both builds' gateways on one shape, started together; their RSS once both have been up IDLE_MS. */
async function round(upstreams: number, order: [number, number]): Promise<void> {
  const started: Array<Awaited<ReturnType<typeof startGateway>> | undefined> = [];
  try {
    await Promise.all(
      order.map(async (which, position) => {
        // The second a moment later, so their children do not all start in the same instant.
        await new Promise((resolve) => setTimeout(resolve, position * 500));
        started[which] = await startGateway(upstreams, TOOLS_EACH, { entry: builds[which]!.entry });
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    for (const which of [0, 1]) readings.get(upstreams)![which]!.push(rssMb(started[which]!.process.pid!));
  } finally {
    await Promise.all(started.map((gateway) => gateway && stopTree(gateway.process)));
  }
}

try {
  say(`idle RSS, ${builds[0]!.label} (A) and ${builds[1]!.label} (B); load ${loadAverages()}`);
  for (let r = 0; r < ROUNDS; r++) {
    for (const upstreams of SHAPES) {
      await round(upstreams, r % 2 === 0 ? [0, 1] : [1, 0]);
      const [a, b] = readings.get(upstreams)!;
      say(`round ${r + 1}, ${upstreams} upstreams: A ${a.at(-1)!.toFixed(1)} MB, B ${b.at(-1)!.toFixed(1)} MB`);
    }
  }
} finally {
  removeScratch(builds);
}

const f = (n: number) => n.toFixed(1);
console.log(
  `\nIdle RSS ${IDLE_MS / 1000} s after start, MB (gateway process only; ${ROUNDS} rounds; load ${loadAverages()})\n`,
);
console.log('| upstreams | build | median | min–max | each round |');
console.log('| ---: | --- | ---: | ---: | --- |');
for (const [upstreams, pair] of readings) {
  for (const [which, values] of pair.entries())
    console.log(
      `| ${upstreams} | ${builds[which]!.label} | ${f(median(values))} | ${f(Math.min(...values))}–` +
        `${f(Math.max(...values))} | ${values.map(f).join(', ')} |`,
    );
}
if (process.env.BENCH_JSON)
  writeFileSync(
    process.env.BENCH_JSON,
    JSON.stringify({ revA, revB, idleMs: IDLE_MS, toolsEach: TOOLS_EACH, readings: Object.fromEntries(readings) }),
  );
