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
}): Promise<LoadResult> {
  const child = spawn(options.command, options.args, { cwd: options.cwd, stdio: ['pipe', 'pipe', 'ignore'] });
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

  let id = 1_000_000;
  for (let i = 0; i < options.warmup; i++) await call(id++);

  const latencies: bigint[] = [];
  let errors = 0;
  let next = 0;
  const began = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < options.total) {
        const i = next++;
        const started = process.hrtime.bigint();
        const response = await call(i);
        latencies.push(process.hrtime.bigint() - started);
        if (!options.check(response, i)) errors++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  child.stdin.end();
  return summarise(latencies, errors, seconds);
}
