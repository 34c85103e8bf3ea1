// npm run bench:search — how well and how fast search mode's tool index finds tools, at 5,000 tools:
// the real fixtures of bench/search/fixtures plus seeded synthetic distractors (bench/search/catalog.ts),
// queried with the labelled set bench/search/queries.json. Prints recall@5, MRR, p50/p95 search latency,
// the index's heap (measured after gc; run with --expose-gc, as the npm script does) and build time.
// BENCH_SEARCH_TOOLS changes the catalog size; BENCH_SEARCH_MISSES=1 lists the queries that missed.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ToolIndex } from '../src/search/tool-index.js';
import { catalog, heldOutQueries, type LabelledQuery, labelledQueries, type Server } from './search/catalog.js';

export interface SearchFigures {
  tools: number;
  queries: number;
  recallAt5: number;
  mrr: number;
  /** The same measures on queries written after the tuning (bench/search/queries-holdout.json). */
  heldOut: { queries: number; recallAt5: number; mrr: number };
  p50Ms: number;
  p95Ms: number;
  indexMb: number | null;
  buildMs: number;
}

// Under `npm run bench` (no --expose-gc) the flag is turned on at run time and gc taken from a fresh context.
const gc: (() => void) | undefined = (globalThis as { gc?: () => void }).gc ?? exposedGc();
function exposedGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc');
  } catch {
    return undefined;
  }
}
const heapUsed = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
};

/** Recall@k (any expected name in the top k) and mean reciprocal rank of the first expected name. */
export function quality(
  index: ToolIndex,
  queries: readonly LabelledQuery[],
  k = 5,
): { recall: number; mrr: number; misses: string[] } {
  let found = 0;
  let reciprocal = 0;
  const misses: string[] = [];
  for (const { query, expected } of queries) {
    const names = index.search(query, { limit: 50 }).map((hit) => hit.name);
    const rank = names.findIndex((name) => expected.includes(name));
    if (rank >= 0 && rank < k) found++;
    else
      misses.push(
        `${query} → ${names.slice(0, 3).join(', ')} (expected ${expected.join(' | ')}, rank ` +
          `${rank < 0 ? '-' : rank + 1})`,
      );
    if (rank >= 0) reciprocal += 1 / (rank + 1);
  }
  return { recall: found / queries.length, mrr: reciprocal / queries.length, misses };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;

export function searchBench(total = 5_000, rounds = 5): SearchFigures & { misses: string[] } {
  const servers: Server[] = catalog(total);
  const queries = labelledQueries();
  const before = gc ? heapUsed() : 0;
  const started = performance.now();
  const index = new ToolIndex();
  for (const server of servers) index.replace(server.name, server.tools);
  const buildMs = performance.now() - started;
  // The definitions themselves belong to the aggregate's lists, not to the index: measure the index with them
  // already held (they are in `servers`), so the delta is what the index adds.
  const indexMb = gc ? (heapUsed() - before) / 1024 / 1024 : null;

  const { recall, mrr, misses } = quality(index, queries);
  const held = heldOutQueries();
  const heldOut = quality(index, held);
  for (const { query } of queries) index.search(query); // warm-up
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++)
    for (const { query } of queries) {
      const t0 = performance.now();
      index.search(query);
      samples.push(performance.now() - t0);
    }
  samples.sort((a, b) => a - b);
  return {
    tools: index.size,
    queries: queries.length,
    recallAt5: recall,
    mrr,
    heldOut: { queries: held.length, recallAt5: heldOut.recall, mrr: heldOut.mrr },
    p50Ms: percentile(samples, 0.5),
    p95Ms: percentile(samples, 0.95),
    indexMb,
    buildMs,
    misses: [...misses, ...heldOut.misses.map((miss) => `(held out) ${miss}`)],
  };
}

export function searchTable(f: SearchFigures): string[] {
  return [
    '| tools | queries | recall@5 | MRR | held out: queries, recall@5, MRR | p50 ms | p95 ms | index MB | build ms |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${f.tools} | ${f.queries} | ${f.recallAt5.toFixed(3)} | ${f.mrr.toFixed(3)} | ${f.heldOut.queries}, ` +
      `${f.heldOut.recallAt5.toFixed(3)}, ${f.heldOut.mrr.toFixed(3)} | ${f.p50Ms.toFixed(3)} | ` +
      `${f.p95Ms.toFixed(3)} | ${f.indexMb === null ? 'n/a (no --expose-gc)' : f.indexMb.toFixed(1)} | ` +
      `${f.buildMs.toFixed(0)} |`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = searchBench(Number(process.env.BENCH_SEARCH_TOOLS ?? 5_000));
  console.log(searchTable(figures).join('\n'));
  console.log(
    `targets: recall@5 ≥ 0.9 ${figures.recallAt5 >= 0.9 ? 'met' : 'MISSED'}, p50 ≤ 2 ms ` +
      `${figures.p50Ms <= 2 ? 'met' : 'MISSED'}, index ≤ 20 MB ` +
      `${figures.indexMb !== null && figures.indexMb <= 20 ? 'met' : 'MISSED'}`,
  );
  if (process.env.BENCH_SEARCH_MISSES) for (const miss of figures.misses) console.log(`miss: ${miss}`);
}
