// The tool index's feed (src/search/index-feed.ts) against an upstream whose tools change without a word:
// the periodic re-read finds the change, an unchanged list is not indexed again, and a read that throws
// leaves the index as it was and search working, the server read again when ready.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { Upstream } from '../../bridge/upstream.js';
import { IndexFeed } from '../../src/search/index-feed.js';
import { silentLog } from '../../infra/log.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { ToolIndex } from '../../src/search/tool-index.js';

/** An upstream whose tools/list answers `tools` as they are now, or throws when `broken` is set. */
function silentServer(tools: { name: string; description: string }[]) {
  const state = { tools, broken: false, lists: 0 };
  const upstream: Upstream = {
    name: 'quiet',
    events: new EventEmitter(),
    request(message: JsonRpcRequest): Promise<JsonRpcResponse> {
      state.lists++;
      if (state.broken) throw new Error('boom');
      return Promise.resolve({
        jsonrpc: '2.0',
        id: message.id,
        result: { resultType: 'complete', tools: state.tools.map((t) => ({ ...t, inputSchema: { type: 'object' } })) },
      });
    },
    status: () => ({ state: 'ready', era: 'modern', restarts: 0, lastError: undefined }),
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return { upstream, state };
}

const names = (index: ToolIndex, query: string) => index.search(query).map((hit) => hit.name);

test('a server that changes silently is re-read within rereadMs; unchanged reads leave the index alone', async () => {
  const { upstream, state } = silentServer([{ name: 'weather', description: 'Forecast for a city' }]);
  const index = new ToolIndex();
  const feed = new IndexFeed(index, {
    upstreams: new Map([['quiet', upstream]]),
    prefixes: new Map(),
    separator: '__',
    log: silentLog,
    rereadMs: 50,
  });
  try {
    feed.sync();
    await feed.settled();
    assert.deepEqual(names(index, 'forecast'), ['quiet__weather']);

    let replaced = 0;
    const replace = index.replace.bind(index);
    index.replace = (server, tools) => {
      replaced++;
      replace(server, tools);
    };
    const listsBefore = state.lists;
    await sleep(200);
    assert.ok(state.lists > listsBefore, 'the server was read again');
    assert.equal(replaced, 0, 'an unchanged list is not indexed again');

    state.tools = [{ name: 'tides', description: 'Tide tables for a harbour' }];
    await sleep(200);
    await feed.settled();
    assert.deepEqual(names(index, 'tide harbour'), ['quiet__tides']);
    assert.deepEqual(names(index, 'forecast'), [], 'a removed tool is no longer found');
  } finally {
    feed.close();
  }
});

test(
  'a read that throws keeps what was indexed, ' + 'search keeps working, and the server is read again when ready',
  async () => {
    const { upstream, state } = silentServer([{ name: 'weather', description: 'Forecast for a city' }]);
    const index = new ToolIndex();
    const feed = new IndexFeed(index, {
      upstreams: new Map([['quiet', upstream]]),
      prefixes: new Map(),
      separator: '__',
      log: silentLog,
      rereadMs: 60_000,
    });
    try {
      feed.sync();
      await feed.settled();
      state.broken = true;
      feed.refresh('quiet');
      await feed.settled(); // settles: the throw is caught, not left to reject every later search
      assert.deepEqual(names(index, 'forecast'), ['quiet__weather']);
      state.broken = false;
      state.tools = [{ name: 'tides', description: 'Tide tables for a harbour' }];
      upstream.events.emit('state', 'ready');
      await feed.settled();
      assert.deepEqual(names(index, 'tide harbour'), ['quiet__tides']);
    } finally {
      feed.close();
    }
  },
);
