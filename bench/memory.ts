// npm run bench -- memory: the gateway's RSS (VmRSS of the gateway process, not its children) at idle with
// 10 upstreams (synthetic modern stdio servers, 50 tools each), then every 10k tools/call through /mcp at 16
// clients up to 100k. The compiled build (bench/build.ts), as `npm start` and the container run it.
// Loopback only; bounded runs.
import { readFileSync } from 'node:fs';
import { startGateway } from './aggregate.js';
import { gatewayEntry } from './build.js';
import { httpLoad, type LoadResult } from './load.js';
import { rssMb, stopTree } from './procs.js';
import { META, mcpHeaders } from './wire.js';

const UPSTREAMS = 10;
const LATER_MS = 30_000;
const TOOLS_EACH = 50;

export interface MemorySample {
  calls: number;
  rssMb: number;
}

export interface MemoryRun {
  build: string;
  /** RSS after start and a settle, before any request. */
  idleMb: number;
  samples: MemorySample[];
  /** Peak RSS over the process's life (VmHWM). */
  peakMb: number;
  firstMb: number;
  lastMb: number;
  maxMb: number;
  /** Least-squares slope over the samples, MB per 10k calls. */
  slopeMbPer10k: number;
  load: LoadResult[];
  errors: number;
}

export interface MemoryResult {
  /** Idle RSS of the same gateway started with Node options that trade speed for memory (no calls). */
  idleWith?: { nodeFlags: string; idleMb: number }[];
  /** Idle RSS of the default gateway read later, once V8 has had time to give back start-up's heap (no calls). */
  idleLater?: { afterMs: number; idleMb: number };
  upstreams: number;
  toolsEach: number;
  calls: number;
  step: number;
  runs: MemoryRun[];
  notes: string[];
}

function hwmMb(pid: number): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Least-squares slope of RSS over calls, MB per 10k calls. */
export function slope(samples: MemorySample[]): number {
  const n = samples.length;
  if (n < 2) return NaN;
  const mx = samples.reduce((s, p) => s + p.calls, 0) / n;
  const my = samples.reduce((s, p) => s + p.rssMb, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of samples) {
    num += (p.calls - mx) * (p.rssMb - my);
    den += (p.calls - mx) ** 2;
  }
  return (num / den) * 10_000;
}

async function one(build: string, entry: string, calls: number, step: number): Promise<MemoryRun> {
  const gateway = await startGateway(UPSTREAMS, TOOLS_EACH, { entry });
  const pid = gateway.process.pid!;
  try {
    // Idle: started, every child spawned and probed; let start-up garbage settle, no request yet.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const idleMb = rssMb(pid);
    const samples: MemorySample[] = [];
    const load: LoadResult[] = [];
    let errors = 0;
    // Calls spread over every upstream and tool: s<u>__tool-<t>, each with its own payload.
    const route = (i: number) => ({ u: i % UPSTREAMS, t: Math.floor(i / UPSTREAMS) % TOOLS_EACH });
    for (let done = 0; done < calls; done += step) {
      const base = done;
      const name = (i: number) => `s${route(base + i).u}__tool-${route(base + i).t}`;
      const r = await httpLoad({
        url: gateway.url,
        headers: (i) => mcpHeaders('tools/call', name(i)),
        body: (i) =>
          JSON.stringify({
            jsonrpc: '2.0',
            id: i,
            method: 'tools/call',
            params: { name: name(i), arguments: { text: `m${base + i}` }, _meta: META },
          }),
        check: (text, i) => {
          const { u, t } = route(base + i);
          try {
            const response = JSON.parse(text);
            return response.id === i && response.result?.content?.[0]?.text === `s${u}/tool-${t}: m${base + i}`;
          } catch {
            return false;
          }
        },
        concurrency: 16,
        total: step,
        deadlineMs: 180_000,
      });
      load.push(r);
      errors += r.errors;
      samples.push({ calls: base + r.calls, rssMb: rssMb(pid) });
      if (r.timedOut) break;
    }
    const values = samples.map((s) => s.rssMb);
    return {
      build,
      idleMb,
      samples,
      peakMb: hwmMb(pid),
      firstMb: values[0] ?? NaN,
      lastMb: values[values.length - 1] ?? NaN,
      maxMb: Math.max(...values),
      slopeMbPer10k: slope(samples),
      load,
      errors,
    };
  } finally {
    await stopTree(gateway.process);
  }
}

export async function memoryBench(
  options: { calls?: number; step?: number; log?: (line: string) => void } = {},
): Promise<MemoryResult> {
  const calls = options.calls ?? 100_000;
  const step = options.step ?? Math.max(1, Math.round(calls / 10));
  const say = options.log ?? (() => {});
  const notes: string[] = [];
  const runs: MemoryRun[] = [];
  const build = 'compiled (tsc, as npm start runs it)';
  const run = await one(build, gatewayEntry(), calls, step);
  runs.push(run);
  say(
    `memory: ${build}: idle ${run.idleMb.toFixed(1)} MB, after ${run.samples.at(-1)?.calls} calls ` +
      `${run.lastMb.toFixed(1)} MB (first ${run.firstMb.toFixed(1)}, max ${run.maxMb.toFixed(1)}), ${run.errors} ` +
      `errors`,
  );
  // V8 grows the young generation to 16 MB while the gateway starts, and keeps it: a smaller cap saves
  // that at idle, at some cost in garbage collection under load (docs/deployment.md).
  const idleWith: NonNullable<MemoryResult['idleWith']> = [];
  for (const nodeFlags of ['--max-semi-space-size=4', '--max-semi-space-size=2']) {
    const gateway = await startGateway(UPSTREAMS, TOOLS_EACH, { entry: gatewayEntry(), nodeFlags: [nodeFlags] });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    idleWith.push({ nodeFlags, idleMb: rssMb(gateway.process.pid!) });
    await stopTree(gateway.process);
    say(`memory: idle with ${nodeFlags}: ${idleWith.at(-1)!.idleMb.toFixed(1)} MB`);
  }
  // The 3 s reading still holds the young generation start-up grew; V8's memory reducer gives it back once
  // the process has been idle a while (seen at ~20 s). What a gateway that sits idle holds is this one.
  const later = await startGateway(UPSTREAMS, TOOLS_EACH, { entry: gatewayEntry() });
  await new Promise((resolve) => setTimeout(resolve, LATER_MS));
  const idleLater = { afterMs: LATER_MS, idleMb: rssMb(later.process.pid!) };
  await stopTree(later.process);
  say(`memory: idle ${LATER_MS / 1000} s after start: ${idleLater.idleMb.toFixed(1)} MB`);
  notes.push(
    `RSS is /proc/<pid>/status VmRSS of the gateway process only (its ${UPSTREAMS} children are not counted); idle ` +
      `is read 3 s after the endpoint is up, before any request.`,
  );
  return { idleWith, idleLater, upstreams: UPSTREAMS, toolsEach: TOOLS_EACH, calls, step, runs, notes };
}

export function memoryTable(result: MemoryResult): string[] {
  const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '–');
  const steps = result.runs[0]?.samples.map((s) => s.calls) ?? [];
  return [
    `| build | idle MB | ${steps.map((c) => `${c / 1000}k`).join(' | ')} | first→last MB | max MB | slope MB/10k | ` +
      `peak (VmHWM) MB | calls/s | errors |`,
    `| --- | ---: | ${steps.map(() => '---:').join(' | ')} | ---: | ---: | ---: | ---: | ---: | ---: |`,
    ...result.runs.map((r) => {
      const rate = r.load.reduce((s, l) => s + l.calls, 0) / r.load.reduce((s, l) => s + l.seconds, 0);
      return (
        `| ${r.build} | ${f(r.idleMb)} | ${r.samples.map((s) => f(s.rssMb)).join(' | ')} | ` +
        `${f(r.firstMb)}→${f(r.lastMb)} (${r.lastMb >= r.firstMb ? '+' : ''}${f(r.lastMb - r.firstMb)}) | ` +
        `${f(r.maxMb)} | ${f(r.slopeMbPer10k, 2)} | ${f(r.peakMb)} | ${f(rate, 0)} | ${r.errors} |`
      );
    }),
    '',
    ...(result.idleWith?.length
      ? [
          `Idle RSS of the same gateway with a smaller young generation: ` +
            `${result.idleWith.map((v) => `\`${v.nodeFlags}\` ${f(v.idleMb)} MB`).join(', ')}.`,
          '',
        ]
      : []),
    ...(result.idleLater
      ? [
          `Idle RSS of the default gateway ${result.idleLater.afterMs / 1000} s after its endpoint is up ` +
            `(start-up's young generation given back by V8): ${f(result.idleLater.idleMb)} MB. The target reads the ` +
            `3 s figure.`,
          '',
        ]
      : []),
    ...result.notes.map((n) => `- ${n}`),
  ];
}
