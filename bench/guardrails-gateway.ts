// npm run bench:guardrails-gateway — what guardrails cost a running gateway, in its own CPU (every thread, read
// to the nanosecond from /proc schedstat) per tools/call: two gateways (the compiled build) on the same stdio
// content server (test/fixtures/content-server.mjs), one without guardrails and one with every built-in detector
// on arguments and results (redact), called in alternating rounds (ABBA) so that load on the machine falls on
// both alike. Reported per call and, with rules, per KiB of result scanned; then single calls with pathological
// results (1 MiB of digits; JSON nested 1,000 deep) against the bound docs/guardrails.md states.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuNs } from './ab-gateways.js';
import { gatewayEntry, removeBuild } from './build.js';
import { loadAverages, startConfiguredGateway, stopTree } from './procs.js';
import { META, mcpHeaders } from './wire.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The stated bound for one pathological result through the gateway: CPU ms per MiB of it. */
const BOUND_MS_PER_MIB = 1_000;
const RULES = [
  {
    name: 'built-ins',
    on: ['arguments', 'results'],
    detect: ['creditCard', 'iban', 'email', 'secrets', 'promptInjection'],
    action: 'redact',
  },
];

interface Gateway {
  url: string;
  pid: number;
  process: ChildProcess;
}

async function start(guardrails: unknown[]): Promise<Gateway> {
  const config = {
    listen: { port: 0 },
    servers: {
      c: {
        command: process.execPath,
        args: [path.join(ROOT, 'test/fixtures/content-server.mjs')],
        era: 'modern',
      },
    },
    audit: { destination: '/dev/null' },
    guardrails,
  };
  const gateway = await startConfiguredGateway(gatewayEntry(), config, { cwd: ROOT });
  return { url: `${gateway.base}/servers/c/mcp`, pid: gateway.process.pid!, process: gateway.process };
}

let nextId = 1;
/** One tools/call; the answer's bytes, read whole. */
async function call(gateway: Gateway, name: string, args: Record<string, unknown>): Promise<number> {
  const body = { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args, _meta: META } };
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: mcpHeaders('tools/call', name),
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${name} answered ${response.status}: ${text.slice(0, 300)}`);
  return text.length;
}

/** The gateway's CPU for `calls` calls, in µs per call (four at a time, as a client with a few tabs would). */
async function round(gateway: Gateway, name: string, args: Record<string, unknown>, calls: number): Promise<number> {
  const before = cpuNs(gateway.pid);
  let left = calls;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (left-- > 0) await call(gateway, name, args);
    }),
  );
  return (cpuNs(gateway.pid) - before) / 1000 / calls;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const CASES: { label: string; name: string; args: Record<string, unknown>; kib: number; calls: number }[] = [
  { label: '1 KiB of ordinary records', name: 'bulk', args: { kib: 1 }, kib: 1, calls: 600 },
  { label: '16 KiB of ordinary records', name: 'bulk', args: { kib: 16 }, kib: 16, calls: 300 },
  { label: '64 KiB of ordinary records', name: 'bulk', args: { kib: 64 }, kib: 64, calls: 120 },
  {
    label: 'CRM record (a card and an IBAN redacted, its outputSchema checked)',
    name: 'crm_record',
    args: {},
    kib: 0.3,
    calls: 600,
  },
];

const plain = await start([]);
const guarded = await start(RULES);
try {
  console.log(`load averages at start: ${loadAverages()} (CPU time is counted, not wall time)`);
  // The first few hundred calls of a fresh gateway run colder code: the first row would carry it.
  for (const g of [plain, guarded]) await round(g, 'bulk', { kib: 1 }, 1_000);
  console.log('| result | no rule | built-in detectors | added | added per KiB |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const c of CASES) {
    for (const g of [plain, guarded]) await round(g, c.name, c.args, 200); // JIT, connections, the lazy imports
    const samples: [number[], number[]] = [[], []];
    for (const order of [
      [0, 1, 1, 0],
      [1, 0, 0, 1],
    ])
      for (const k of order) samples[k as 0 | 1].push(await round(k === 0 ? plain : guarded, c.name, c.args, c.calls));
    const [none, rules] = [median(samples[0]), median(samples[1])];
    // A redaction's fixed costs (the copy, the outputSchema check) are no cost per KiB scanned.
    const perKib = c.name === 'bulk' ? `${((rules - none) / c.kib).toFixed(1)} µs` : '–';
    console.log(
      `| ${c.label} | ${none.toFixed(0)} µs | ${rules.toFixed(0)} µs | ${(rules - none).toFixed(0)} µs | ${perKib} |`,
    );
  }
  console.log('');
  console.log('| pathological result, one call | no rule | built-in detectors |');
  console.log('| --- | --- | --- |');
  const worst: [string, Record<string, unknown>, number][] = [
    ['1 MiB of digits', { shape: 'digits', kib: 1024 }, 1],
    ['JSON nested 1,000 deep (a card at the bottom)', { shape: 'nested', depth: 1000 }, 0],
  ];
  let over = false;
  for (const [label, args, mib] of worst) {
    const ms: number[] = [];
    for (const g of [plain, guarded]) {
      await round(g, 'bulk', args, 2);
      ms.push(median([await round(g, 'bulk', args, 3), await round(g, 'bulk', args, 3)]) / 1000);
    }
    console.log(`| ${label} | ${ms[0]!.toFixed(1)} ms | ${ms[1]!.toFixed(1)} ms |`);
    if (mib > 0 && ms[1]! - ms[0]! > BOUND_MS_PER_MIB * mib) over = true;
  }
  if (over) {
    console.log(`over the stated bound of ${BOUND_MS_PER_MIB} ms of added CPU per MiB`);
    process.exitCode = 1;
  }
} finally {
  await Promise.all([stopTree(plain.process), stopTree(guarded.process)]);
  removeBuild();
}
