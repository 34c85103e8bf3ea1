// npm run bench -- aggregate: tools/list and tools/call through /mcp with 10 and 100 upstreams of 50
// tools each (synthetic modern stdio servers). Shows how list cost grows with the tool count while a call
// stays one map lookup. Loopback only; bounded call counts.
import type { ChildProcess } from 'node:child_process';
import { startConfiguredGateway } from './procs.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gatewayEntry } from './build.js';
import { httpLoad, type LoadResult } from './load.js';
import { META, mcpHeaders } from './wire.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export async function startGateway(
  upstreams: number,
  toolsEach: number,
  options: {
    listTtlMs?: number;
    cache?: Record<string, unknown>;
    /** The gateway's entry point (default: the compiled build). */
    entry?: string;
    /** More top-level config keys (auth, policies, audit…). */
    extra?: Record<string, unknown>;
    /** Node options for the gateway process (not its children). */
    nodeFlags?: string[];
    /** More environment for every upstream (test/fixtures/synthetic-server.mjs reads it). */
    env?: Record<string, string>;
  } = {},
): Promise<{ url: string; process: ChildProcess }> {
  const servers: Record<string, unknown> = {};
  for (let i = 0; i < upstreams; i++) {
    const env = {
      SERVER_ID: `s${i}`,
      TOOL_COUNT: String(toolsEach),
      LIST_TTL_MS: String(options.listTtlMs ?? 60_000),
      ...options.env,
    };
    servers[`s${i}`] = {
      command: process.execPath,
      args: [path.join(ROOT, 'test/fixtures/synthetic-server.mjs')],
      env,
      era: 'modern',
    };
  }
  const config = {
    listen: { port: 0 },
    aggregate: { listDeadlineMs: 30_000 },
    cache: options.cache ?? {},
    servers,
    ...options.extra,
  };
  const gateway = await startConfiguredGateway(options.entry ?? gatewayEntry(), config, {
    nodeFlags: options.nodeFlags,
    cwd: ROOT,
  });
  return { url: `${gateway.base}/mcp`, process: gateway.process };
}

export interface AggregateRow {
  upstreams: number;
  tools: number;
  list: LoadResult;
  call: LoadResult;
  /** tools/list once every upstream's list is cacheable, 4 clients (absent in figures from before it was measured). */
  cachedList?: LoadResult;
  /** The same with one client: the latency of a list with no queueing behind other lists. */
  cachedListOne?: LoadResult;
}

/** One gateway per [upstreams, tools each]; every call goes to s0, so only the routing table grows. */
export async function aggregateBench(shapes: [upstreams: number, toolsEach: number][]): Promise<AggregateRow[]> {
  const rows: AggregateRow[] = [];
  for (const [upstreams, toolsEach] of shapes) {
    // Upstream lists are not cacheable here (ttlMs 0): this measures merging, not the cache.
    const gateway = await startGateway(upstreams, toolsEach, { listTtlMs: 0 });
    const total = upstreams * toolsEach;
    // Every call goes to s0, so the only thing that differs between sizes is the routing table.
    const toolName = (i: number) => `s0__tool-${i % toolsEach}`;
    const list = () =>
      httpLoad({
        url: gateway.url,
        headers: mcpHeaders('tools/list'),
        body: (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list', params: { _meta: META } }),
        check: (text) => JSON.parse(text).result?.tools?.length === total,
        concurrency: 4,
        total: upstreams > 50 ? 200 : 1_000,
      });
    await list(); // warm-up: every child started and probed
    const listResult = await list();
    const call = await httpLoad({
      url: gateway.url,
      headers: (i) => mcpHeaders('tools/call', toolName(i)),
      body: (i) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: toolName(i), arguments: { text: `p${i}` }, _meta: META },
        }),
      check: (text, i) => JSON.parse(text).result?.content?.[0]?.text === `s0/tool-${i % toolsEach}: p${i}`,
      concurrency: 16,
      total: 10_000,
    });
    gateway.process.kill('SIGTERM');
    await new Promise((resolve) => gateway.process.once('exit', resolve));

    // The same lists once the upstreams say they stay fresh: served from the merged-page cache.
    const cachedGateway = await startGateway(upstreams, toolsEach, { listTtlMs: 60_000 });
    const cachedList = (concurrency: number, check: (text: string, i: number) => boolean, headBytes?: number) =>
      httpLoad({
        url: cachedGateway.url,
        headers: mcpHeaders('tools/list'),
        body: (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list', params: { _meta: META } }),
        check,
        headBytes,
        concurrency,
        total: 1_000,
      });
    // Warm-up checks every answer in full; the measured runs check only that each is its own success, from
    // its first bytes, so the load generator's decoding and JSON.parse of a 1 MB answer are not counted.
    await cachedList(4, (text) => JSON.parse(text).result?.tools?.length === total);
    const ownSuccess = (text: string, i: number) =>
      text.startsWith(`{"jsonrpc":"2.0","id":${i},"result":{"resultType":"complete","tools":[`);
    const cachedResult = await cachedList(4, ownSuccess, 256);
    const cachedOne = await cachedList(1, ownSuccess, 256);
    cachedGateway.process.kill('SIGTERM');
    await new Promise((resolve) => cachedGateway.process.once('exit', resolve));
    rows.push({ upstreams, tools: total, list: listResult, call, cachedList: cachedResult, cachedListOne: cachedOne });
  }
  return rows;
}

export function aggregateTable(rows: AggregateRow[]): string[] {
  const f = (n: number) => n.toFixed(2);
  return [
    '| upstreams | tools | tools/list uncached p50 ms | p99 ms | lists/s (4 clients) | tools/list cached, 1 client: ' +
      'p50 ms | p99 ms | cached, 4 clients: p50 ms | p99 ms | lists/s | tools/call to s0 p50 ms | p99 ms | calls/s ' +
      '(16 clients) | errors |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => {
      const c = r.cachedList;
      const one = r.cachedListOne;
      const cachedOne = one ? `${f(one.p50Ms)} | ${f(one.p99Ms)}` : '– | –';
      const cached = c ? `${f(c.p50Ms)} | ${f(c.p99Ms)} | ${c.callsPerSecond.toFixed(0)}` : '– | – | –';
      return (
        `| ${r.upstreams} | ${r.tools} | ${f(r.list.p50Ms)} | ${f(r.list.p99Ms)} | ` +
        `${r.list.callsPerSecond.toFixed(0)} | ${cachedOne} | ${cached} | ${f(r.call.p50Ms)} | ${f(r.call.p99Ms)} | ` +
        `${r.call.callsPerSecond.toFixed(0)} | ` +
        `${r.list.errors + r.call.errors + (c?.errors ?? 0) + (one?.errors ?? 0)} |`
      );
    }),
  ];
}

export interface CacheRow {
  store: string;
  result: LoadResult;
}

/** Aggregated tools/list over 3 upstreams (40 tools): uncached, and cached in memory and in Redis. */
export async function cacheBench(): Promise<CacheRow[]> {
  const rows: CacheRow[] = [];
  const cases: [string, { listTtlMs: number; cache?: Record<string, unknown> }][] = [
    ['uncached (upstream ttlMs 0)', { listTtlMs: 0 }],
    ['memory', { listTtlMs: 60_000 }],
    [
      'redis (memory in front)',
      { listTtlMs: 60_000, cache: { store: 'redis', keyPrefix: `mcp-gateway-bench:${process.pid}:` } },
    ],
  ];
  for (const [store, options] of cases) {
    const gateway = await startGateway(3, 13, options);
    const load = () =>
      httpLoad({
        url: gateway.url,
        headers: mcpHeaders('tools/list'),
        body: (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list', params: { _meta: META } }),
        check: (text) => JSON.parse(text).result?.tools?.length === 39,
        concurrency: 16,
        total: 10_000,
      });
    await load();
    rows.push({ store, result: await load() });
    gateway.process.kill('SIGTERM');
    await new Promise((resolve) => gateway.process.once('exit', resolve));
  }
  return rows;
}

export function cacheTable(rows: CacheRow[]): string[] {
  const f = (n: number) => n.toFixed(2);
  return [
    '| store | p50 ms | p99 ms | lists/s (16 clients) | errors |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.store} | ${f(r.result.p50Ms)} | ${f(r.result.p99Ms)} | ${r.result.callsPerSecond.toFixed(0)} | ` +
        `${r.result.errors} |`,
    ),
  ];
}
