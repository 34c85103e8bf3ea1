// npm run bench:ab -- REV_A [REV_B] — is a change free on the hot path? Builds two revisions of the gateway
// (REV_B defaults to the work tree as it stands), runs both at once on the same stdio echo upstream, and
// measures them in interleaved rounds of tools/call at 16 clients, so drift on a shared machine hits both
// alike. The figure compared is the gateway process's own CPU per call (user + sys from /proc/<pid>/stat),
// which stays steady when latency does not; calls/s and p50 are shown beside it. Loopback only.
// Mind the position: on a 2-core machine the two gateways, their children and the load generator share the
// cores, and two identical builds have read ×0.91 here (B favoured). Run it again with A and B swapped and
// believe only a difference that holds both ways.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { httpLoad, type LoadResult } from './load.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 8_000);
const CLIENTS = Number(process.env.BENCH_CONCURRENCY ?? 16);
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
};
const upstream = `${process.execPath} --import tsx ${path.join(ROOT, 'test/fixtures/modern-server.ts')}`;

interface Build {
  label: string;
  folder: string;
  entry: string;
}

/** The revision's tree, compiled by its own tsc config; `worktree` builds the files as they stand now. */
function build(rev: string): Build {
  const folder = mkdtempSync(path.join(tmpdir(), 'gateway-ab-'));
  if (rev === 'worktree') {
    const files = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' }).stdout;
    const tar = spawnSync('tar', ['-c', '--null', '-T', '-', '-f', '-'], { cwd: ROOT, input: files, maxBuffer: 1 << 30 });
    spawnSync('tar', ['-x', '-C', folder], { input: tar.stdout, maxBuffer: 1 << 30 });
  } else {
    const archive = spawnSync('git', ['archive', rev], { cwd: ROOT, maxBuffer: 1 << 30 });
    if (archive.status !== 0) throw new Error(`git archive ${rev} failed: ${archive.stderr}`);
    spawnSync('tar', ['-x', '-C', folder], { input: archive.stdout, maxBuffer: 1 << 30 });
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(folder, 'node_modules'));
  const tsc = spawnSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json', '--outDir', 'out'], { cwd: folder, encoding: 'utf8' });
  const entry = path.join(folder, 'out/src/cli.js');
  if (tsc.status !== 0 || !existsSync(entry)) throw new Error(`${rev} does not compile: ${(tsc.stdout + tsc.stderr).slice(0, 800)}`);
  return { label: rev, folder, entry };
}

async function start(entry: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [entry, '--stdio', upstream, '--name', 'echo', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${log}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8');
      const match = /"endpoint":"([^"]+\/servers\/echo\/mcp)"/.exec(log);
      if (match) clearTimeout(timer), resolve(match[1]!), (log = '');
    });
  });
  return { url, child };
}

/** user + sys CPU seconds of one process, from /proc/<pid>/stat (fields 14 and 15, in clock ticks). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function round(url: string, pid: number): Promise<{ cpuUsPerCall: number; result: LoadResult }> {
  const before = cpuSeconds(pid);
  const result = await httpLoad({
    url,
    headers: HEADERS,
    body: (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: `payload-${i}` }, _meta: META } }),
    check: (text, i) => text.includes(`"payload-${i}"`),
    concurrency: CLIENTS,
    total: CALLS,
  });
  return { cpuUsPerCall: ((cpuSeconds(pid) - before) * 1e6) / result.calls, result };
}

const [revA, revB = 'worktree'] = process.argv.slice(2);
if (!revA) throw new Error('usage: npm run bench:ab -- REV_A [REV_B]   (REV_B defaults to the work tree)');
const builds = [build(revA), build(revB)];
const running = [];
try {
  for (const b of builds) running.push(await start(b.entry));
  for (const r of running) await round(r.url, r.child.pid!); // warm-up: era probe, JIT, connections
  const samples = builds.map(() => [] as Array<{ cpuUsPerCall: number; result: LoadResult }>);
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) samples[k]!.push(await round(running[k]!.url, running[k]!.child.pid!));
  }
  console.log(`| build | gateway CPU µs/call | calls/s | p50 ms | errors |  (${ROUNDS} rounds × ${CALLS} calls, ${CLIENTS} clients, medians)`);
  console.log('| --- | ---: | ---: | ---: | ---: |');
  const cpu = samples.map((s) => median(s.map((x) => x.cpuUsPerCall)));
  builds.forEach((b, k) => {
    const s = samples[k]!;
    const errors = s.reduce((n, x) => n + x.result.errors, 0);
    console.log(`| ${b.label} | ${cpu[k]!.toFixed(1)} | ${median(s.map((x) => x.result.callsPerSecond)).toFixed(0)} | ${median(s.map((x) => x.result.p50Ms)).toFixed(3)} | ${errors} |`);
  });
  console.log(`\nCPU per call, B ÷ A: ×${(cpu[1]! / cpu[0]!).toFixed(3)}`);
} finally {
  for (const r of running) r.child.kill('SIGTERM');
  for (const b of builds) rmSync(b.folder, { recursive: true, force: true });
}
