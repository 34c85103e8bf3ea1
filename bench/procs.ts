// Process helpers for the bench: loopback ports, RSS from /proc, the machine's load, readiness polls and a stop
// that leaves no descendant behind (peers put their children in other process groups, so a group kill is not enough).
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';

/** A port that was free on 127.0.0.1 a moment ago (for peers that cannot listen on port 0 and say so). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function status(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
}

/** The 1, 5 and 15 minute load averages, as a table's header line shows them ("0.52, 0.61, 0.70"). */
export const loadAverages = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

/** VmRSS of this one process (not its children), in MB; NaN if it is gone. */
export function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status(pid) ?? '');
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Every live descendant of pid (by PPid, whatever their process group), deepest last. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const match = /^PPid:\s+(\d+)/m.exec(status(Number(entry)) ?? '');
    if (!match) continue;
    const ppid = Number(match[1]);
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  for (let i = 0; i < queue.length && i < 10_000; i++) {
    for (const child of parents.get(queue[i]!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

export const alive = (pid: number): boolean => status(pid) !== undefined && !/^State:\s+Z/m.test(status(pid) ?? '');

/** SIGTERM to the process, up to graceMs for it to exit, then SIGKILL to it and to any descendant left. */
export async function stopTree(child: ChildProcess, graceMs = 8_000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const tree = descendants(pid);
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
  // Descendants get the same grace to follow their parent's shutdown, then are killed by pid.
  const deadline = Date.now() + graceMs;
  while (tree.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  for (const leftover of tree.filter(alive)) {
    try {
      process.kill(leftover, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Spawns a server whose stderr is drained (so it never blocks on its log); keeps the last 4 KB of it. */
export function spawnServer(
  command: string,
  args: string[],
  options: SpawnOptions,
): { process: ChildProcess; log: () => string } {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-4096);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { process: child, log: () => log };
}

/** Polls `probe` every 200 ms until it says yes, at most `timeoutMs`. */
export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  log: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; attempt < 1_000 && Date.now() < deadline; attempt++) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} was not ready within ${timeoutMs} ms:\n${log()}`);
}

/**
 * The URL a gateway process logs once it serves (the first match of `pattern`'s group 1 in its stderr); its
 * log keeps being drained afterwards so the gateway never blocks on it. Kills it and rejects after `timeoutMs`.
 */
export function announcedUrl(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  let log = '';
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // its children are in their own process groups: they exit on their stdin's EOF
      reject(new Error(`gateway did not start:\n${log.slice(-2000)}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      log += chunk.toString('utf8');
      const match = pattern.exec(log);
      if (!match) return;
      clearTimeout(timer);
      child.stderr!.off('data', onData);
      child.stderr!.resume();
      resolve(match[1]!);
    };
    child.stderr!.on('data', onData);
  });
}

/**
 * The gateway at `entry` (the compiled cli.js) serving `config`, written to a JSON file of its own (JSON is
 * YAML: the bench needs no YAML writer); `base` is its URL without a path, once it says it serves every server.
 */
export async function startConfiguredGateway(
  entry: string,
  config: Record<string, unknown>,
  options: { nodeFlags?: string[]; cwd?: string } = {},
): Promise<{ base: string; process: ChildProcess }> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-gw-bench-')), 'gateway.config.json');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), entry, '--config', file], {
    cwd: options.cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const base = await announcedUrl(child, /"endpoint":"([^"]+)\/mcp","msg":"serving every server/, 60_000);
  return { base, process: child };
}
