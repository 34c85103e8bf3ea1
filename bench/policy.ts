// npm run bench -- policy: what authentication and 100 allow-list policies add to a request over 5,000
// tools (10 synthetic upstreams × 500). Three gateways run side by side — open; an API key and the audit
// log; the same plus 100 policies (the caller matched by 5 of them, one with a CEL condition) — measured
// in turns, median of three runs each; then the decisions alone are timed in process, cold and memoised.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PolicySet } from '../policy/allow-list.js';
import { Guard } from '../policy/guard.js';
import { PinStore } from '../policy/pins.js';
import type { PolicySetting } from '../policy/settings.js';
import { silentLog } from '../infra/log.js';
import { startGateway } from './aggregate.js';
import { httpLoad, type LoadResult } from './load.js';
import { META, mcpHeaders } from './wire.js';

const UPSTREAMS = 10;
const TOOLS_EACH = 500;
const KEY = 'bench-key-0123456789abcdef';

export interface PolicyRow {
  path: string;
  call: LoadResult;
  list: LoadResult;
  /** Tools the caller sees in the list. */
  visible: number;
}

export interface PolicyFigures {
  rows: PolicyRow[];
  /** In-process decision cost, microseconds. */
  decideColdUs: number;
  decideWarmUs: number;
  filterColdMs: number;
  filterWarmUs: number;
}

/** 100 policies over groups g0…g99; each allows two upstreams, some tools by glob, and denies one. */
export function benchPolicies(): PolicySetting[] {
  return Array.from({ length: 100 }, (_, i) => ({
    name: `p${i}`,
    principals: { groups: [`g${i}`] },
    allow: {
      servers: [`s${i % UPSTREAMS}`, `s${(i + 3) % UPSTREAMS}`],
      tools: [`s${i % UPSTREAMS}__tool-${i % 10}*`, `s${(i + 3) % UPSTREAMS}__tool-*`],
    },
    deny: { tools: [`s${(i + 3) % UPSTREAMS}__tool-49${i % 10}`] },
    when:
      i % 20 === 0
        ? [
            {
              tool: `s${(i + 3) % UPSTREAMS}__tool-*`,
              expr: "size(args.text) < 100 && principal.groups.exists(g, g.startsWith('g'))",
            },
          ]
        : [],
    pin: false,
  }));
}

const CALLER_GROUPS = ['g0', 'g20', 'g41', 'g62', 'g83'];

export async function policyBench(): Promise<PolicyFigures> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-gw-bench-policy-'));
  const auth = { apiKeys: [{ key: KEY, principal: 'bench', groups: CALLER_GROUPS }] };
  const variants: [string, Record<string, unknown>][] = [
    ['open (no auth, no policies)', {}],
    ['API key + audit log', { auth, audit: { destination: path.join(dir, 'audit-key.jsonl') } }],
    [
      'API key + 100 policies + audit log',
      { auth, policies: benchPolicies(), audit: { destination: path.join(dir, 'audit-policies.jsonl') } },
    ],
  ];
  // All three run side by side and are measured in turns, so drift in a shared machine's load hits each alike.
  const gateways = await Promise.all(
    variants.map(([, extra]) => startGateway(UPSTREAMS, TOOLS_EACH, { listTtlMs: 60_000, extra })),
  );
  // s3's tools: allowed to the caller through p0's second glob, under p0's CEL condition (which holds).
  const tool = (i: number) => `s3__tool-${i % 10}`;
  const credentials = (extra: Record<string, unknown>): Record<string, string> =>
    'auth' in extra ? { authorization: `Bearer ${KEY}` } : {};
  const call = (url: string, extra: Record<string, unknown>) =>
    httpLoad({
      url,
      headers: (i) => mcpHeaders('tools/call', tool(i), credentials(extra)),
      body: (i) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: tool(i), arguments: { text: `p${i}` }, _meta: META },
        }),
      check: (text, i) => JSON.parse(text).result?.content?.[0]?.text === `s3/tool-${i % 10}: p${i}`,
      concurrency: 16,
      total: 10_000,
    });
  const visible = variants.map(() => 0);
  const list = (url: string, extra: Record<string, unknown>, v: number, total: number) =>
    httpLoad({
      url,
      headers: mcpHeaders('tools/list', undefined, credentials(extra)),
      body: (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list', params: { _meta: META } }),
      check: (text) => {
        const tools = JSON.parse(text).result?.tools;
        visible[v] = Array.isArray(tools) ? tools.length : -1;
        return visible[v]! > 0;
      },
      concurrency: 4,
      total,
    });
  const calls: LoadResult[][] = variants.map(() => []);
  const lists: LoadResult[][] = variants.map(() => []);
  for (const [v, [, extra]] of variants.entries()) {
    await list(gateways[v]!.url, extra, v, 20); // warm-up: children started, lists cached
    await call(gateways[v]!.url, extra);
  }
  for (let round = 0; round < 3; round++) {
    for (const [v, [, extra]] of variants.entries()) {
      calls[v]!.push(await call(gateways[v]!.url, extra));
      lists[v]!.push(await list(gateways[v]!.url, extra, v, 300));
    }
  }
  for (const gateway of gateways) {
    gateway.process.kill('SIGTERM');
    await new Promise((resolve) => gateway.process.once('exit', resolve));
  }
  const byMedianP50 = (runs: LoadResult[]) => [...runs].sort((a, b) => a.p50Ms - b.p50Ms)[1]!;
  const rows = variants.map(
    ([label], v): PolicyRow => ({
      path: label,
      call: byMedianP50(calls[v]!),
      list: byMedianP50(lists[v]!),
      visible: visible[v]!,
    }),
  );
  return { rows, ...inProcess() };
}

/** The decisions alone: a tools/call check and a 5,000-tool list filter, before and after memoisation. */
function inProcess(): Pick<PolicyFigures, 'decideColdUs' | 'decideWarmUs' | 'filterColdMs' | 'filterWarmUs'> {
  const servers = Array.from({ length: UPSTREAMS }, (_, i) => `s${i}`);
  const principal = { id: 'bench', groups: CALLER_GROUPS, scopes: [], via: 'api-key' as const };
  const tools = servers.flatMap((s) =>
    Array.from({ length: TOOLS_EACH }, (_, t) => ({
      name: `${s}__tool-${t}`,
      description: 'd',
      inputSchema: { type: 'object' },
    })),
  );
  const guardFor = () =>
    new Guard({
      prefixes: new Map(servers.map((s) => [s, s])),
      separator: '__',
      ownerOf: () => undefined,
      pins: new PinStore(undefined, silentLog),
    });
  const time = (fn: () => void) => {
    const start = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - start) / 1e3;
  };
  // Cold: a fresh compile each round, so nothing is memoised.
  const cold: number[] = [];
  const warm: number[] = [];
  for (let round = 0; round < 200; round++) {
    const grant = PolicySet.compile(benchPolicies(), new Set(servers)).grantFor(principal);
    const name = `s3__tool-${round % TOOLS_EACH}`;
    const facts = { args: { text: 'x' }, principal, tool: name, server: 's3' };
    cold.push(time(() => grant.allowsCall('s3', name, facts)));
    warm.push(time(() => grant.allowsCall('s3', name, facts)));
  }
  const listResponse = { jsonrpc: '2.0' as const, id: 1, result: { tools } };
  const filterCold: number[] = [];
  const filterWarm: number[] = [];
  for (let round = 0; round < 20; round++) {
    const grant = PolicySet.compile(benchPolicies(), new Set(servers)).grantFor(principal);
    const guard = guardFor();
    filterCold.push(time(() => guard.shape(undefined, 'tools/list', listResponse, grant)) / 1e3);
    filterWarm.push(time(() => guard.shape(undefined, 'tools/list', listResponse, grant)));
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return {
    decideColdUs: median(cold),
    decideWarmUs: median(warm),
    filterColdMs: median(filterCold),
    filterWarmUs: median(filterWarm),
  };
}

export function policyTable(figures: PolicyFigures): string[] {
  const f = (n: number) => n.toFixed(2);
  const open = figures.rows[0];
  const policed = figures.rows.at(-1);
  const lines = [
    `| gateway (${UPSTREAMS} upstreams × ${TOOLS_EACH} tools) | tools/call p50 ms | p99 ms | calls/s (16 clients) | ` +
      `cached tools/list p50 ms | p99 ms | tools seen | errors |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...figures.rows.map(
      (r) =>
        `| ${r.path} | ${f(r.call.p50Ms)} | ${f(r.call.p99Ms)} | ${r.call.callsPerSecond.toFixed(0)} | ` +
        `${f(r.list.p50Ms)} | ${f(r.list.p99Ms)} | ${r.visible} | ${r.call.errors + r.list.errors} |`,
    ),
  ];
  if (open && policed) {
    lines.push(
      '',
      `Added p50 (median of 3 runs each, taken in turns): tools/call ${f(policed.call.p50Ms - open.call.p50Ms)} ms, ` +
        `tools/list ${f(policed.list.p50Ms - open.list.p50Ms)} ms (the policed list is also ` +
        `${open.visible - policed.visible} tools shorter).`,
    );
  }
  lines.push(
    '',
    `In process, 100 policies: a tools/call decision ${f(figures.decideColdUs)} µs cold (first time for a name), ` +
      `${f(figures.decideWarmUs)} µs memoised;`,
    `filtering the 5,000-tool list ${f(figures.filterColdMs)} ms the first time for a grant, ` +
      `${f(figures.filterWarmUs)} µs after (memoised per cached list).`,
  );
  return lines;
}
