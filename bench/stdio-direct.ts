// The same calls straight over a stdio child, multiplexed by id: the floor the bridge is measured against.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { summarise, type LoadResult } from './load.js';

export async function stdioLoad(options: {
  command: string;
  args: string[];
  cwd: string;
  message: (id: number) => object;
  check: (response: any, id: number) => boolean;
  concurrency: number;
  total: number;
  warmup: number;
  /** Wall-clock bound for warm-up and run (default 10 min): then unanswered calls count as errors. */
  deadlineMs?: number;
}): Promise<LoadResult> {
  const child = spawn(options.command, options.args, { cwd: options.cwd, stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.on('error', () => {}); // a child that died is reported by its unanswered calls
  const waiting = new Map<number, (response: any) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message: any;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  const call = (id: number) =>
    new Promise<any>((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(JSON.stringify(options.message(id)) + '\n');
    });

  // One watchdog, not a timer per call: at the deadline every waiting call is answered with undefined
  // (an error) and the workers stop.
  let timedOut = false;
  const watchdog = setTimeout(() => {
    timedOut = true;
    for (const resolve of waiting.values()) resolve(undefined);
    waiting.clear();
  }, options.deadlineMs ?? 600_000);
  child.on('exit', () => {
    for (const resolve of waiting.values()) resolve(undefined);
    waiting.clear();
  });

  let id = 1_000_000;
  for (let i = 0; i < options.warmup && !timedOut; i++) await call(id++);

  const latencies: bigint[] = [];
  let errors = 0;
  let next = 0;
  const began = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < options.total && !timedOut) {
        const i = next++;
        const started = process.hrtime.bigint();
        const response = await call(i);
        latencies.push(process.hrtime.bigint() - started);
        if (!options.check(response, i)) errors++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  clearTimeout(watchdog);
  child.stdin.end();
  // The child exits on stdin EOF; make sure of it (bounded), so no process outlives the bench.
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
  return timedOut ? { ...summarise(latencies, errors, seconds), timedOut } : summarise(latencies, errors, seconds);
}
