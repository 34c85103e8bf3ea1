// npm run bench:guardrails — what guardrails cost in CPU, in process (no gateway, no network): (1) per KiB of
// realistic content scanned by every built-in detector, (2) choosing the rules of a request (memoised), (3) the
// pathological inputs: 1 MiB of digits, of letters, of JWT starts, of card-like groups, of `a@`, of URL
// userinfo that never reaches its '@', a deeply nested JSON value, and a catastrophic-backtracking expression as a
// custom (RE2) detector. Prints a table;
// the bound docs/guardrails.md states is checked here (a run that exceeds it says so and exits 1).
import { BUILT_IN_DETECTORS } from '../policy/guardrails/detectors.js';
import { customDetector } from '../policy/guardrails/custom-regex.js';
import { GuardrailSet } from '../policy/guardrails/rule-set.js';
import { judgeContent, type ScanRule } from '../policy/guardrails/scan.js';

/** The stated bound: no pathological input takes more than this many ms of CPU per MiB (on a laptop-class core). */
const BOUND_MS_PER_MIB = 1_000;

const ALL: ScanRule[] = [{ name: 'all', action: 'log', detectors: Object.values(BUILT_IN_DETECTORS) }];
const REDACT: ScanRule[] = [{ name: 'all', action: 'redact', detectors: Object.values(BUILT_IN_DETECTORS) }];

function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** A realistic result: CRM records, an issue body, a web page; about `kib` KiB of JSON. */
function realistic(kib: number): unknown {
  const records = [];
  let size = 0;
  for (let i = 0; size < kib * 1024; i++) {
    const record = {
      id: `ORD-2026-${String(i).padStart(6, '0')}`,
      customer: `Customer ${i}`,
      email: i % 10 === 0 ? `customer${i}@example.com` : undefined,
      note: 'Shipped on 2026-12-07T05:12:44Z, tracking 1Z999AA10123456784, hash 9f86d081884c7d659a2feaa0c55ad015',
      body: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.',
    };
    size += JSON.stringify(record).length;
    records.push(record);
  }
  return { content: [{ type: 'text', text: JSON.stringify(records) }], structuredContent: { records } };
}

function perKib(kib: number, rules: ScanRule[]): number {
  const value = realistic(kib);
  judgeContent(value, rules); // warm
  const rounds = 20;
  const ms = cpuMs(() => {
    for (let i = 0; i < rounds; i++) judgeContent(value, rules);
  });
  // The value holds its text twice (content and structuredContent): 2 × kib scanned per round.
  return (ms * 1000) / (rounds * 2 * kib);
}

function choosingUs(): number {
  const set = GuardrailSet.compile(
    Array.from({ length: 20 }, (_, i) => ({
      name: `r${i}`,
      on: ['results' as const],
      servers: [`s${i % 5}`],
      tools: [`s${i % 5}__tool-${i}*`],
      detect: ['secrets'],
      action: 'redact' as const,
    })),
    { servers: new Set(['s0', 's1', 's2', 's3', 's4']), endpoints: new Set(['/mcp']) },
  );
  const principal = { id: 'alice', groups: ['support'], scopes: [], via: 'api-key' as const };
  const facts = { principal, endpoint: '/mcp', stage: 'results' as const, server: 's1', kind: 'tools' as const };
  const rounds = 200_000;
  const ms = cpuMs(() => {
    for (let i = 0; i < rounds; i++) set.rulesFor({ ...facts, name: `s1__tool-${i % 50}` });
  });
  return (ms * 1000) / rounds;
}

function pathological(): { input: string; ms: number }[] {
  const mib = 1 << 20;
  const texts: [string, string][] = [
    ['1 MiB of digits', '7'.repeat(mib)],
    ['1 MiB of letters', 'a'.repeat(mib)],
    ['1 MiB of "eyJ"', 'eyJ'.repeat(mib / 3)],
    ['1 MiB of "4111 "', '4111 '.repeat(mib / 5)],
    ['1 MiB of "a@"', 'a@'.repeat(mib / 2)],
    ['1 MiB of "-----BEGIN PRIVATE KEY-----"', '-----BEGIN PRIVATE KEY-----'.repeat(mib / 27)],
    ['1 MiB of "a://b:"', 'a://b:'.repeat(mib / 6)],
    [
      '1 MiB of "x://" + 64 user + ":" + 128 password, no "@"',
      `x://${'u'.repeat(64)}:${'p'.repeat(128)}/`.repeat(mib / 198),
    ],
  ];
  const rows = texts.map(([input, text]) => ({ input, ms: cpuMs(() => judgeContent({ text }, REDACT)) }));
  let deep: unknown = { text: 'card 4111111111111111' };
  for (let i = 0; i < 100_000; i++) deep = [deep];
  rows.push({ input: 'JSON nested 100,000 deep', ms: cpuMs(() => judgeContent(deep, ALL)) });
  const evil = customDetector('evil', '(a+)+$');
  const evilRules: ScanRule[] = [{ name: 'evil', action: 'log', detectors: [evil] }];
  rows.push({
    input: 'custom (a+)+$ over 1 MiB of letters',
    ms: cpuMs(() => judgeContent({ text: `${'a'.repeat(mib)}!` }, evilRules)),
  });
  return rows;
}

const scanLog = perKib(256, ALL);
const scanRedact = perKib(256, REDACT);
const choose = choosingUs();
const worst = pathological();
console.log('| measure | CPU |');
console.log('| --- | --- |');
console.log(`| scan, every built-in detector, log (realistic JSON) | ${scanLog.toFixed(1)} µs/KiB |`);
console.log(`| scan, every built-in detector, redact (same) | ${scanRedact.toFixed(1)} µs/KiB |`);
console.log(`| choosing a request's rules (20 rules, memoised) | ${choose.toFixed(2)} µs |`);
for (const row of worst) console.log(`| ${row.input} | ${row.ms.toFixed(0)} ms |`);
const over = worst.filter((row) => row.ms > BOUND_MS_PER_MIB);
if (over.length > 0) {
  console.log(`over the stated bound of ${BOUND_MS_PER_MIB} ms per MiB: ${over.map((row) => row.input).join(', ')}`);
  process.exitCode = 1;
}
