// Where the suite's CPU goes: runs each test file alone through test/run-files.sh under `perf stat` and prints a
// table of file, CPU seconds, wall seconds, tests and processes started. CPU is what a busy machine does not spoil
// (wall time there is mostly waiting for a core); it counts every process of the run (the runner, the file's
// process, its gateways, fixtures, Chromium, redis-server, HAProxy) once each has ended, as `perf stat` inherits
// its counters into every child. Processes started are the `execve` calls seen (sched:sched_process_exec): a
// forked child that never execs is not one. Needs `perf` with tracepoints (root, or perf_event_paranoid -1).
//
//   npm run -s test:cpu                         every file of the plan, shared pass first, then the alone pass
//   npm run -s test:cpu -- test/e2e/a.test.ts   just these files
//   TEST_CPU_OUT=cpu.tsv                        also append each row there as it is measured (a long run's
//                                               partial result survives an interruption)
//
// The runner's own start (plan, reporters) is part of each row: about 0.3 s of CPU.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { plan } from './plan.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** One file's row: run alone through the suite's runner, counted by `perf stat`. */
function measure(file, scratch) {
  const counts = path.join(scratch, 'perf.csv');
  const began = performance.now();
  const run = spawnSync(
    'perf',
    ['stat', '-x,', '-o', counts, '-e', 'task-clock,sched:sched_process_exec', '--', 'bash', 'test/run-files.sh'],
    { cwd: root, env: { ...process.env, TEST_FILES: file }, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  const wall = (performance.now() - began) / 1000;
  if (run.error) throw new Error(`could not run perf (${run.error.message}): install it (apt-get install linux-perf)`);
  const counted = Object.fromEntries(
    readFileSync(counts, 'utf8')
      .split('\n')
      .map((line) => line.split(','))
      .filter((fields) => fields.length > 2)
      .map(([value, , event]) => [event, Number(value)]),
  );
  if (!Number.isFinite(counted['sched:sched_process_exec']))
    throw new Error('perf counted no execs: run as root or set kernel.perf_event_paranoid to -1');
  const tally = (name) => Number(run.stdout.match(new RegExp(`^# ${name} (\\d+)$`, 'm'))?.[1] ?? 0);
  return {
    file,
    cpu: counted['task-clock'] / 1000,
    wall,
    tests: tally('tests'),
    failed: tally('fail') + tally('cancelled'),
    processes: counted['sched:sched_process_exec'],
    exit: run.status,
  };
}

function row({ file, cpu, wall, tests, failed, processes, exit }) {
  const verdict = exit === 0 ? '' : `  (exit ${exit}, ${failed} failed)`;
  const columns = [cpu.toFixed(1).padStart(7), wall.toFixed(1).padStart(7), String(tests).padStart(5)];
  return `${columns.join('  ')}  ${String(processes).padStart(5)}  ${file}${verdict}`;
}

const named = process.argv.slice(2);
const chosen = named.length ? { together: named, browsers: [], alone: [] } : plan(root, process.env);
if (chosen.problems?.length) {
  process.stderr.write(`test/runner/cpu-table.mjs: the plan is wrong:\n  ${chosen.problems.join('\n  ')}\n`);
  process.exit(2);
}
const files = [...chosen.together, ...chosen.browsers, ...chosen.alone];
const scratch = mkdtempSync(path.join(tmpdir(), 'test-cpu-'));
const header = '  CPU s   wall s  tests  procs  file';
const rows = [];
try {
  process.stderr.write(`${header}\n`);
  for (const file of files) {
    const measured = measure(file, scratch);
    rows.push(measured);
    process.stderr.write(`${row(measured)}\n`);
    if (process.env.TEST_CPU_OUT)
      appendFileSync(
        process.env.TEST_CPU_OUT,
        `${[
          file,
          measured.cpu.toFixed(2),
          measured.wall.toFixed(1),
          measured.tests,
          measured.processes,
          measured.exit,
        ].join('\t')}\n`,
      );
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
rows.sort((a, b) => b.cpu - a.cpu);
const total = rows.reduce((sum, r) => sum + r.cpu, 0);
process.stdout.write(`${header}\n${rows.map(row).join('\n')}\n${total.toFixed(1).padStart(7)}  total CPU s\n`);
