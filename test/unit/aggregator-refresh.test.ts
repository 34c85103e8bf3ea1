// The aggregator's re-read of its lists (what a name nobody listed, and the status page's tool counts, set
// off): every merged page in turn, each upstream asked with its own cursor, stopped by a page that fails
// everywhere or by the page limit, and not read again within a second.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Upstream } from '../../bridge/upstream.js';
import { Aggregator } from '../../src/aggregate/aggregator.js';
import { silentLog } from '../../infra/log.js';
import { ErrorCode, errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';

interface Paging {
  tools: number;
  pageSize: number;
  /** Answers this page (0-based) with an error instead. */
  failOnPage?: number;
  /** Gives a next cursor on every page, however many. */
  endless?: boolean;
}

/** An upstream that lists `tools` tools `pageSize` at a time; `cursors` records the cursor of each request. */
function pagedUpstream(name: string, paging: Paging) {
  const cursors: (string | undefined)[] = [];
  const upstream: Upstream = {
    name,
    events: new EventEmitter(),
    request(message: JsonRpcRequest): Promise<JsonRpcResponse> {
      const cursor = message.params?.cursor as string | undefined;
      cursors.push(cursor);
      const page = cursor === undefined ? 0 : Number(cursor);
      if (page === paging.failOnPage)
        return Promise.resolve(errorResponse(message.id, ErrorCode.InternalError, 'page gone'));
      const first = paging.endless ? 0 : page * paging.pageSize;
      const tools = Array.from({ length: Math.max(0, Math.min(paging.pageSize, paging.tools - first)) }, (_, i) => ({
        name: `t${first + i}`,
        inputSchema: { type: 'object' },
      }));
      const more = paging.endless || (page + 1) * paging.pageSize < paging.tools;
      return Promise.resolve({
        jsonrpc: '2.0',
        id: message.id,
        result: { resultType: 'complete', tools, ...(more && { nextCursor: String(page + 1) }) },
      });
    },
    status: () => ({ state: 'ready', era: 'modern', restarts: 0, lastError: undefined }),
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return { upstream, cursors };
}

function aggregatorOver(servers: Record<string, Paging>) {
  const made = Object.entries(servers).map(([name, paging]) => [name, pagedUpstream(name, paging)] as const);
  const aggregator = new Aggregator({
    upstreams: new Map(made.map(([name, { upstream }]) => [name, upstream])),
    prefixes: new Map(),
    separator: '__',
    listDeadlineMs: 5_000,
    cursorSecret: 'test-secret',
    log: silentLog,
  });
  return { aggregator, cursors: Object.fromEntries(made.map(([name, { cursors }]) => [name, cursors])) };
}

test('every merged page is read, each upstream following its own cursors until its list ends', async () => {
  const { aggregator, cursors } = aggregatorOver({ a: { tools: 5, pageSize: 2 }, b: { tools: 3, pageSize: 2 } });
  assert.deepEqual(Object.fromEntries(await aggregator.toolCounts()), { a: 5, b: 3 });
  assert.deepEqual(cursors, { a: [undefined, '1', '2'], b: [undefined, '1'] });
});

test('a page that fails on every upstream ends the reading; the routes read before it stay', async () => {
  const { aggregator, cursors } = aggregatorOver({ a: { tools: 6, pageSize: 2, failOnPage: 1 } });
  assert.deepEqual(Object.fromEntries(await aggregator.toolCounts()), { a: 2 });
  assert.deepEqual(cursors, { a: [undefined, '1'] });
});

test('a page that fails on one upstream only is a gap: the others are still followed to their end', async () => {
  const { aggregator, cursors } = aggregatorOver({
    a: { tools: 6, pageSize: 2, failOnPage: 1 },
    b: { tools: 6, pageSize: 2 },
  });
  assert.deepEqual(Object.fromEntries(await aggregator.toolCounts()), { a: 2, b: 6 });
  assert.deepEqual(cursors, { a: [undefined, '1'], b: [undefined, '1', '2'] });
  assert.equal(aggregator.gaps.get('a'), 1);
});

test('a list whose cursors never end is read for 1,000 pages, then taken as ended', async () => {
  const { aggregator, cursors } = aggregatorOver({ a: { tools: 1, pageSize: 1, endless: true } });
  await aggregator.toolCounts();
  assert.equal(cursors.a!.length, 1_000);
});

test('read at most once a second: a second count right after the first asks nobody', async () => {
  const { aggregator, cursors } = aggregatorOver({ a: { tools: 3, pageSize: 2 } });
  await aggregator.toolCounts();
  await aggregator.toolCounts();
  assert.deepEqual(cursors, { a: [undefined, '1'] });
});
