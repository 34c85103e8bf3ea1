// The processes bench:ab compares: a revision's gateway compiled by its own tsc config (cached by commit,
// so a bisect builds each revision once), started on the stdio echo fixture, its CPU read to the
// nanosecond, and optionally pinned to one core with its upstream child and the load generator on the other.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { announcedUrl, descendants, stopTree } from './procs.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CACHE = path.join(tmpdir(), 'gateway-ab-builds');
const upstream = `${process.execPath} --import tsx ${path.join(ROOT, 'test/fixtures/modern-server.ts')}`;

export interface Build {
  label: string;
  entry: string;
  /** Removed when the bench ends (the work tree's build); a commit's build stays cached. */
  scratch?: string;
}

/** The revision compiled; `worktree` builds the files as they stand now (never cached). */
export function build(rev: string): Build {
  if (rev === 'worktree') {
    const folder = mkdtempSync(path.join(tmpdir(), 'gateway-ab-'));
    // A work tree whose node_modules is a symlink (a git worktree sharing the main checkout's) lists it as an
    // untracked file: left out here, it is linked below as for any build.
    const files = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .stdout.split('\0')
      .filter((file) => file !== 'node_modules')
      .join('\0');
    const tar = spawnSync('tar', ['-c', '--null', '-T', '-', '-f', '-'], {
      cwd: ROOT,
      input: files,
      maxBuffer: 1 << 30,
    });
    spawnSync('tar', ['-x', '-C', folder], { input: tar.stdout, maxBuffer: 1 << 30 });
    return { label: rev, entry: compile(folder, rev), scratch: folder };
  }
  const sha = spawnSync('git', ['rev-parse', '--verify', `${rev}^{commit}`], {
    cwd: ROOT,
    encoding: 'utf8',
  }).stdout.trim();
  if (!sha) throw new Error(`no such revision: ${rev}`);
  const folder = path.join(CACHE, sha);
  const entry = path.join(folder, 'out/src/cli.js');
  if (existsSync(entry)) return { label: rev, entry };
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const archive = spawnSync('git', ['archive', sha], { cwd: ROOT, maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new Error(`git archive ${rev} failed: ${archive.stderr}`);
  spawnSync('tar', ['-x', '-C', folder], { input: archive.stdout, maxBuffer: 1 << 30 });
  try {
    return { label: rev, entry: compile(folder, rev) };
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

function compile(folder: string, rev: string): string {
  installDependencies(folder, rev);
  const tsc = spawnSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json', '--outDir', 'out'], {
    cwd: folder,
    encoding: 'utf8',
  });
  const entry = path.join(folder, 'out/src/cli.js');
  if (tsc.status !== 0 || !existsSync(entry))
    throw new Error(`${rev} does not compile: ${(tsc.stdout + tsc.stderr).slice(0, 800)}`);
  return entry;
}

// A revision whose lockfile matches the work tree's shares its node_modules; an older one (say, from
// before a dependency was removed) gets its own install, or it would not compile.
function installDependencies(folder: string, rev: string): void {
  const lock = (root: string) => readFileSync(path.join(root, 'package-lock.json'), 'utf8');
  if (lock(folder) === lock(ROOT)) {
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(folder, 'node_modules'));
    return;
  }
  const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: folder,
    encoding: 'utf8',
  });
  if (npm.status !== 0) throw new Error(`npm ci for ${rev} failed: ${(npm.stdout + npm.stderr).slice(-800)}`);
}

export function removeScratch(builds: Build[]): void {
  for (const b of builds) if (b.scratch) rmSync(b.scratch, { recursive: true, force: true });
}

export interface Gateway {
  url: string;
  pid: number;
  child: ChildProcess;
}

/** A gateway serving the echo fixture as /servers/echo/mcp; its log is drained so it never blocks on it. */
export async function startGateway(entry: string): Promise<Gateway> {
  const child = spawn(process.execPath, [entry, '--stdio', upstream, '--name', 'echo', '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await announcedUrl(child, /"endpoint":"([^"]+\/servers\/echo\/mcp)"/, 30_000);
  return { url, pid: child.pid!, child };
}

export const stopGateway = (g: Gateway): Promise<void> => stopTree(g.child);

/**
 * CPU nanoseconds of every thread of one process (main, libuv pool, V8's GC and compiler threads), from
 * /proc/<pid>/task/<tid>/schedstat: nanosecond resolution where /proc/<pid>/stat counts 10 ms ticks.
 */
export function cpuNs(pid: number): number {
  let sum = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      sum += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return sum;
}

/** Puts every thread of pid on the given CPUs (taskset -a); false when taskset is missing or refuses. */
function pin(pid: number, cpus: string): boolean {
  return spawnSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' }).status === 0;
}

/**
 * The gateway on `gatewayCpu`, its upstream child (and that child's children) and this process (the load
 * generator) on `otherCpu`: the gateway never competes with its own load for a core.
 */
export function pinApart(gateways: Gateway[], gatewayCpu: string, otherCpu: string): boolean {
  let ok = pin(process.pid, otherCpu);
  for (const g of gateways) {
    ok = pin(g.pid, gatewayCpu) && ok;
    for (const child of descendants(g.pid)) ok = pin(child, otherCpu) && ok;
  }
  return ok;
}

export interface PairRun<S> {
  /** Each block's rounds: [A's two, B's two]. */
  blocks: [S[], S[]][];
  /** Whether taskset pinned them (undefined when not asked to). */
  pinned: boolean | undefined;
}

/**
 * One process pair's share of an ABBA comparison: A and B started in an order that alternates with `pair`,
 * pinned apart when asked, warmed up, then `blocks` blocks of four rounds, ABBA or BAAB by turns (so neither
 * position favours one); both stopped at the end. `round` loads one process and returns its sample.
 */
export async function abbaPair<S>(
  pair: number,
  start: readonly [() => Promise<Gateway>, () => Promise<Gateway>],
  schedule: { blocks: number; warmup: number; calls: number; pin: boolean },
  round: (target: Gateway, calls: number) => Promise<S>,
): Promise<PairRun<S>> {
  const startOrder = pair % 2 === 0 ? [0, 1] : [1, 0];
  const both: Gateway[] = [];
  try {
    for (const k of startOrder) both[k] = await start[k]!();
    const pinned = schedule.pin ? pinApart(both, '1', '0') : undefined;
    for (const k of startOrder) await round(both[k]!, schedule.warmup); // era probe, JIT, connections
    const blocks: [S[], S[]][] = [];
    for (let b = 0; b < schedule.blocks; b++) {
      const got: [S[], S[]] = [[], []];
      for (const k of (b + pair) % 2 === 0 ? [0, 1, 1, 0] : [1, 0, 0, 1])
        got[k as 0 | 1].push(await round(both[k]!, schedule.calls));
      blocks.push(got);
    }
    return { blocks, pinned };
  } finally {
    await Promise.all(both.filter(Boolean).map(stopGateway));
  }
}
