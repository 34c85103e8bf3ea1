// npm run bench -- lists: big lists from cache at wire speed (issue 21, item 3). One synthetic stdio server
// with 5,000 tools, 5,000 resources and 5,000 prompts, paged 1,000 at a time by the server and cacheable.
// One client lists everything (every page, following nextCursor) through the gateway, on /servers/s0/mcp
// and on /mcp, and from a bare node:http server that answers each page with the same bytes the gateway
// sent (recorded once), only the id spliced in: the floor of writing those bytes. Alternating rounds; the
// verdict reads the median of the per-round ratios of p50. The client reads each answer to its end but
// decodes none of it (nextCursor is found in the bytes), so neither side pays for the client's parsing.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway } from './aggregate.js';
import { median } from './ab-stats.js';
import { gatewayEntry } from './build.js';
import { loadAverages, stopTree } from './procs.js';
import { META, mcpHeaders } from './wire.js';

const ITEMS = 5_000;
const PAGE = 1_000;
const ROUNDS = Number(process.env.BENCH_LISTS_ROUNDS ?? 5);
const LISTINGS = Number(process.env.BENCH_LISTS_LISTINGS ?? 100);
const METHODS = [
  ['tools/list', 'tools'],
  ['resources/list', 'resources'],
  ['prompts/list', 'prompts'],
] as const;

export interface ListsRow {
  method: string;
  endpoint: string;
  /** Per round: p50 ms of one whole listing (all pages), gateway and floor, and their ratio. */
  rounds: { gatewayMs: number; floorMs: number; ratio: number }[];
  bytes: number;
  pages: number;
}

export interface ListsResult {
  rows: ListsRow[];
  load: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One POST; resolves with the whole answer's bytes. */
function post(url: URL, method: string, id: number, cursor: string | undefined): Promise<Buffer> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method,
    params: cursor === undefined ? { _meta: META } : { cursor, _meta: META },
  });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: { ...mcpHeaders(method), 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks))
            : reject(new Error(`HTTP ${res.statusCode} for ${method}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const CURSOR = Buffer.from('"nextCursor":"');

/** The page's nextCursor, read from its bytes (cursors here are plain digits, no escapes). */
function nextCursor(answer: Buffer): string | undefined {
  const at = answer.lastIndexOf(CURSOR);
  if (at < 0) return undefined;
  const start = at + CURSOR.length;
  return answer.toString('latin1', start, answer.indexOf(0x22, start));
}

/** Every page of `method`, in order; the answers' bytes. */
async function listAll(url: URL, method: string, id: number): Promise<Buffer[]> {
  const pages: Buffer[] = [];
  let cursor: string | undefined;
  do {
    const answer = await post(url, method, id, cursor);
    pages.push(answer);
    cursor = nextCursor(answer);
  } while (cursor !== undefined && pages.length < 100);
  return pages;
}

/** p50 ms of `count` whole listings. */
async function p50(url: URL, method: string, count: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const began = performance.now();
    await listAll(url, method, i);
    times.push(performance.now() - began);
  }
  return median(times);
}

/**
 * The floor: node:http answering each page (by method and cursor) with the bytes the gateway sent for it,
 * the id spliced in where the gateway's was. It parses the request body as the gateway must.
 */
async function floorServer(
  pages: Map<string, { before: Buffer; after: Buffer }>,
): Promise<{ url: URL; close(): void }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const page = pages.get(`${message.method}\0${message.params?.cursor ?? ''}`)!;
      const id = Buffer.from(JSON.stringify(message.id));
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': page.before.length + id.length + page.after.length,
      });
      res.write(page.before);
      res.write(id);
      res.end(page.after);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/`), close: () => server.close() };
}

/** The gateway's answers for every page of every method, split around the id (recorded with id 0). */
async function record(url: URL): Promise<Map<string, { before: Buffer; after: Buffer }>> {
  const pages = new Map<string, { before: Buffer; after: Buffer }>();
  const ID = Buffer.from('"id":0,');
  for (const [method, key] of METHODS) {
    let cursor: string | undefined;
    do {
      const answer = await post(url, method, 0, cursor);
      const items = JSON.parse(answer.toString('utf8')).result?.[key]?.length;
      if (items !== PAGE) throw new Error(`${method} page ${cursor ?? 'first'} had ${items} ${key}, not ${PAGE}`);
      const at = answer.indexOf(ID) + '"id":'.length;
      pages.set(`${method}\0${cursor ?? ''}`, { before: answer.subarray(0, at), after: answer.subarray(at + 1) });
      cursor = nextCursor(answer);
    } while (cursor !== undefined);
  }
  return pages;
}

export async function listsBench(options: { log?: (line: string) => void } = {}): Promise<ListsResult> {
  const say = options.log ?? (() => {});
  const load = loadAverages();
  const env = { RESOURCE_COUNT: String(ITEMS), PROMPT_COUNT: String(ITEMS), PAGE_SIZE: String(PAGE) };
  const gateway = await startGateway(1, ITEMS, { entry: gatewayEntry(), env });
  const rows: ListsRow[] = [];
  try {
    for (const endpoint of ['/servers/s0/mcp', '/mcp']) {
      const url = new URL(endpoint, gateway.url);
      const pages = await record(url); // also fills the gateway's cache
      const floor = await floorServer(pages);
      try {
        for (const [method] of METHODS) {
          await p50(url, method, 20); // warm-up: JIT on both sides
          await p50(floor.url, method, 20);
          const rounds: ListsRow['rounds'] = [];
          for (let round = 0; round < ROUNDS; round++) {
            const first = round % 2 === 0;
            const a = first ? await p50(url, method, LISTINGS) : 0;
            const floorMs = await p50(floor.url, method, LISTINGS);
            const gatewayMs = first ? a : await p50(url, method, LISTINGS);
            rounds.push({ gatewayMs, floorMs, ratio: gatewayMs / floorMs });
          }
          const mine = [...pages].filter(([k]) => k.startsWith(`${method}\0`));
          rows.push({
            method,
            endpoint,
            rounds,
            pages: mine.length,
            bytes: mine.reduce((s, [, p]) => s + p.before.length + p.after.length + 1, 0),
          });
          const r = rows.at(-1)!;
          say(
            `lists: ${method} on ${endpoint}: ×${median(r.rounds.map((x) => x.ratio)).toFixed(3)} ` +
              `(${r.rounds.map((x) => `${x.gatewayMs.toFixed(2)}/${x.floorMs.toFixed(2)}`).join(', ')} ms)`,
          );
        }
      } finally {
        floor.close();
      }
    }
  } finally {
    agent.destroy();
    await stopTree(gateway.process);
  }
  return { rows, load };
}

export function listsTable(result: ListsResult): string[] {
  const f = (n: number, d = 2) => n.toFixed(d);
  const spread = (values: number[], d: number) =>
    `${f(median(values), d)} (${f(Math.min(...values), d)}–${f(Math.max(...values), d)})`;
  return [
    `Load average at the start (1, 5, 15 min): ${result.load}. Each figure: p50 of ${LISTINGS} whole listings ` +
      `(every page) at one client; median of ${ROUNDS} alternating rounds (min–max).`,
    '',
    '| list | endpoint | pages | bytes | gateway p50 ms | floor p50 ms | ratio |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...result.rows.map(
      (r) =>
        `| ${r.method} | ${r.endpoint} | ${r.pages} | ${r.bytes} | ${spread(
          r.rounds.map((x) => x.gatewayMs),
          2,
        )} | ${spread(
          r.rounds.map((x) => x.floorMs),
          2,
        )} | ×${spread(
          r.rounds.map((x) => x.ratio),
          3,
        )} |`,
    ),
  ];
}
