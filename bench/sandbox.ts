// Sandboxed against bare stdio children (issue 47): start-up time (spawn to the first answer), resident
// memory of the whole process tree per child (bwrap's two processes included), and the hop cost of a call
// once started (sandboxing wraps only the spawn, so it should add nothing per call): wall time, and the CPU
// the child's tree and this process spend per call, which a loaded machine's scheduling does not inflate.
// Run: node --import tsx bench/sandbox.ts [starts=20] [calls=2000]  (needs bubblewrap; not a test)
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLog } from '../infra/log.js';
import { sandboxChild, type ChildCommand, type SandboxPolicy } from '../bridge/sandbox/sandbox.js';
import { descendants, loadAverages, rssMb } from './procs.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const starts = Number(process.argv[2] ?? 20);
const calls = Number(process.argv[3] ?? 2000);
const bare: ChildCommand = {
  command: process.execPath,
  args: [path.join(ROOT, 'test/fixtures/hostile-server.mjs')],
  cwd: ROOT,
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
};
const policy: SandboxPolicy = {
  network: { kind: 'none' },
  read: [],
  write: [],
  hide: [],
  memoryBytes: 512 * 1024 * 1024,
  processes: 64,
  openFiles: 256,
  tmpBytes: 64 * 1024 * 1024,
};

interface Running {
  child: ChildProcessWithoutNullStreams;
  ask(method: string, params?: object): Promise<unknown>;
}

function start(command: ChildCommand): Running {
  // detached, as the gateway starts every child (its own session and process group, bare or not)
  const child = spawn(command.command, command.args, {
    cwd: command.cwd,
    env: command.env,
    stdio: 'pipe',
    detached: true,
  });
  const waiting = new Map<number, (answer: unknown) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  let id = 0;
  return {
    child,
    ask: (method, params = {}) =>
      new Promise((resolve) => {
        waiting.set(++id, resolve);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      }),
  };
}

/** User and system CPU of a process and its descendants, in ms (from /proc; clock ticks of 10 ms). */
function treeCpuMs(pid: number): number {
  return [pid, ...descendants(pid)].reduce((sum, one) => {
    try {
      const fields = readFileSync(`/proc/${one}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return sum + (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return sum; // gone meanwhile
    }
  }, 0);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(label: string, command: ChildCommand) {
  const startMs: number[] = [];
  const treeMb: number[] = [];
  const processes: number[] = [];
  for (let i = 0; i < starts; i++) {
    const began = performance.now();
    const running = start(command);
    await running.ask('server/discover');
    startMs.push(performance.now() - began);
    const tree = [running.child.pid!, ...descendants(running.child.pid!)];
    processes.push(tree.length);
    treeMb.push(tree.reduce((sum, pid) => sum + (rssMb(pid) || 0), 0));
    running.child.stdin.end();
    await new Promise((resolve) => running.child.once('exit', resolve));
  }
  const running = start(command);
  await running.ask('server/discover');
  for (let i = 0; i < 200; i++) await running.ask('tools/call', { name: 'argv' }); // warm-up
  const began = performance.now();
  const childCpu = treeCpuMs(running.child.pid!);
  const ownCpu = process.cpuUsage();
  for (let i = 0; i < calls; i++) await running.ask('tools/call', { name: 'argv' });
  const perCallUs = ((performance.now() - began) / calls) * 1000;
  const childUs = ((treeCpuMs(running.child.pid!) - childCpu) / calls) * 1000;
  const own = process.cpuUsage(ownCpu);
  const ownUs = (own.user + own.system) / calls;
  running.child.stdin.end();
  await new Promise((resolve) => running.child.once('exit', resolve));
  const row = [
    label,
    median(startMs).toFixed(0),
    median(treeMb).toFixed(1),
    median(processes),
    perCallUs.toFixed(0),
    childUs.toFixed(0),
    ownUs.toFixed(0),
  ];
  console.log(`| ${row.join(' | ')} |`);
}

const boxed = await sandboxChild('bench', bare, policy, silentLog);
console.log(`load ${loadAverages()}; ${starts} starts, ${calls} sequential calls each; medians`);
console.log(
  '| child | start-up ms | RSS of its tree MB | processes | µs per call | child CPU µs/call | caller CPU µs/call |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (let round = 0; round < 3; round++) {
  await measure('bare', bare);
  await measure('sandboxed', boxed);
}
