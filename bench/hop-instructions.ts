// node --import tsx bench/hop-instructions.ts KIND… — instructions per proxied call, counted by valgrind's
// callgrind, for the gateway and the bare proxy on the same load: a figure that does not move with the
// machine's load the way CPU time does (a shared 2-core machine spreads CPU-time ratios by ±10% or more).
// KIND is `gateway` (the work tree, compiled), `bare` (bench/bare-proxy.mjs) or a compiled cli.js (say one
// bench:ab built under $TMPDIR/gateway-ab-builds/<sha>/out/src/cli.js). Each runs alone under callgrind with
// one stdio echo child (not counted), takes HOP_WARM calls (3,000), has its counters zeroed, takes HOP_CALLS
// calls (1,000) and is dumped. Slow: 20–30 min per gateway on a busy machine.
// Read the main thread's share (`node::Start` in callgrind_annotate --inclusive=yes of the dump): under
// valgrind V8 still compiles on its worker threads after any warm-up, which native runs long finished.
// HOP_CLIENTS (1): one client gives the most repeatable count; 16 batches work as the machine allows.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gatewayEntry, removeBuild } from './build.js';
import { httpLoad } from './load.js';
import { announcedUrl, stopTree } from './procs.js';
import { META, mcpHeaders } from './wire.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const node = process.execPath;
const ECHO = ['--import', 'tsx', path.join(ROOT, 'test/fixtures/modern-server.ts')];
const CLIENTS = Number(process.env.HOP_CLIENTS ?? 1);
const WARM = Number(process.env.HOP_WARM ?? 3_000);
const CALLS = Number(process.env.HOP_CALLS ?? 1_000);
const dir = mkdtempSync(path.join(tmpdir(), 'hop-callgrind-'));
const VALGRIND = ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${dir}/cg.%p`];

async function start(kind: string): Promise<{ url: string; child: ReturnType<typeof spawn> }> {
  if (kind === 'bare') {
    const child = spawn('valgrind', [...VALGRIND, node, path.join(ROOT, 'bench/bare-proxy.mjs'), '1', node, ...ECHO], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.on('data', (chunk: Buffer) => appendFileSync(`${dir}/bare.stderr`, chunk));
    const url = await new Promise<string>((resolve) => {
      let log = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        log += chunk.toString('utf8');
        const port = /listening (\d+)/.exec(log)?.[1];
        if (port) resolve(`http://127.0.0.1:${port}/mcp`);
      });
    });
    return { url, child };
  }
  const entry = kind === 'gateway' ? gatewayEntry() : kind;
  const server = { command: node, args: ECHO, cwd: ROOT, era: 'modern', instances: 1, maxInFlight: 16 };
  const file = path.join(dir, 'gateway.config.json');
  writeFileSync(file, JSON.stringify({ listen: { port: 0 }, log: { level: 'info' }, servers: { s: server } }));
  const child = spawn('valgrind', [...VALGRIND, node, entry, '--config', file], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (chunk: Buffer) => appendFileSync(`${dir}/gateway.stderr`, chunk));
  const base = await announcedUrl(child, /"endpoint":"([^"]+)\/mcp","msg":"serving every server/, 1_800_000);
  return { url: `${base}/servers/s/mcp`, child };
}

const load = (url: string, calls: number) =>
  httpLoad({
    url,
    headers: mcpHeaders('tools/call', 'echo'),
    body: (i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: `t${i}` }, _meta: META },
      }),
    check: (text, i) => JSON.parse(text).id === i,
    concurrency: CLIENTS,
    total: calls,
    deadlineMs: 3_600_000,
  });

try {
  for (const kind of process.argv.slice(2)) {
    const { url, child } = await start(kind);
    const warm = await load(url, WARM);
    spawnSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
    const measured = await load(url, CALLS);
    spawnSync('callgrind_control', ['-d', 'measured', String(child.pid)], { stdio: 'ignore' });
    const dump = readdirSync(dir)
      .filter((f) => f.startsWith(`cg.${child.pid}.`))
      .sort()
      .at(-1)!;
    const total = Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(path.join(dir, dump), 'utf8'))?.[1]);
    console.log(
      `${kind}: ${(total / measured.calls / 1000).toFixed(1)} k instructions per call, all threads ` +
        `(${measured.calls} calls, ${measured.errors + warm.errors} errors, ${CLIENTS} clients); dump ` +
        `${path.join(dir, dump)}`,
    );
    await stopTree(child, 20_000);
  }
} finally {
  removeBuild();
}
