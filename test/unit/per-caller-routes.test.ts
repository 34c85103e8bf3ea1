// A /mcp name of a server each caller reaches as themselves (their own account or values), called before this
// gateway read that caller's list (the list came from another replica, or before a restart): the router reads
// the lists again as that caller (src/aggregate/router.ts confirm, aggregator.ts refresh), since read as the
// gateway such a server lists nothing. A shared server's lists are still read as the gateway.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import { silentLog } from '../../infra/log.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { Aggregator } from '../../src/aggregate/aggregator.js';
import type { CallerConnections } from '../../src/aggregate/connect-placeholder.js';

interface Seen {
  server: string;
  method: string;
  name: unknown;
  principal: string | undefined;
}

/** `tools` answers a tools/list for a principal (undefined: read as the gateway) with these names, or null: refused. */
function upstream(server: string, seen: Seen[], tools: (principal: string | undefined) => string[] | null): Upstream {
  return {
    name: server,
    events: new EventEmitter(),
    status: () => ({ state: 'ready', era: 'modern', restarts: 0, lastError: undefined }),
    start: async () => {},
    close: async () => {},
    request: async (message: JsonRpcRequest, options?: RequestOptions): Promise<JsonRpcResponse> => {
      const principal = options?.caller?.principal;
      seen.push({ server, method: message.method, name: message.params?.name, principal });
      if (message.method === 'tools/call')
        return {
          jsonrpc: '2.0',
          id: message.id,
          result: { content: [{ type: 'text', text: `${server} ran ${String(message.params?.name)}` }] },
        };
      const names = tools(principal);
      if (names === null)
        return {
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32603, message: `${server} is reached as each caller, and this request came with no caller` },
        };
      return {
        jsonrpc: '2.0',
        id: message.id,
        result: {
          tools: names.map((name) => ({ name, inputSchema: { type: 'object' } })),
          ttlMs: 0,
          cacheScope: 'private',
        },
      };
    },
  };
}

function setup(connected: (principal: string) => boolean = () => true) {
  const seen: Seen[] = [];
  // crm lists each connected caller's own tools, and nothing to the gateway itself.
  const crm = upstream('crm', seen, (principal) =>
    principal === undefined ? null : principal === 'alice' ? ['read', 'alice-only'] : ['read'],
  );
  const local = upstream('local', seen, () => ['echo']);
  const connections: CallerConnections = {
    needs: (server) => (server === 'crm' ? 'account' : undefined),
    connected: async (_server, principal) => connected(principal),
  };
  const aggregator = new Aggregator({
    upstreams: new Map([
      ['crm', crm],
      ['local', local],
    ]),
    prefixes: new Map([
      ['crm', 'crm'],
      ['local', 'local'],
    ]),
    separator: '__',
    listDeadlineMs: 5_000,
    cursorSecret: undefined,
    log: silentLog,
    connections,
  });
  return { aggregator, seen };
}

const call = (name: string, id = 1): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
});
const as = (principal: string): RequestOptions => ({ caller: { principal }, authContext: `ctx-${principal}` });

function textOf(answer: JsonRpcResponse): string {
  assert.ok('result' in answer, `expected a result, got ${JSON.stringify(answer)}`);
  return (answer.result.content as { text: string }[])[0]!.text;
}

test(
  "a connected caller's tool that no list here showed yet is found by reading the lists as " + 'that caller',
  async () => {
    const { aggregator, seen } = setup();
    const answer = await aggregator.request(call('crm__read'), as('alice'));
    assert.equal(textOf(answer), 'crm ran read');
    const lists = seen.filter((s) => s.method === 'tools/list');
    assert.deepEqual(
      lists.map((s) => [s.server, s.principal]).sort(),
      [
        ['crm', 'alice'],
        ['local', 'alice'],
      ],
      'the list was read as alice, not as the gateway',
    );
    assert.deepEqual(seen.at(-1), { server: 'crm', method: 'tools/call', name: 'read', principal: 'alice' });
  },
);

test(
  'each caller has their own refresh: another caller right after is not held to the first one\u2019s once a ' +
    'second',
  async () => {
    const { aggregator, seen } = setup();
    assert.equal(textOf(await aggregator.request(call('crm__read'), as('alice'))), 'crm ran read');
    // A name nobody lists, asked by alice again at once, reads nothing more (her once a second).
    const before = seen.length;
    const unknown = await aggregator.request(call('crm__nope', 2), as('alice'));
    assert.ok('error' in unknown);
    assert.equal(seen.length, before, 'no second read for alice within the second');
    // carol's miss is her own: read as carol.
    const carol = await aggregator.request(call('crm__nope', 3), as('carol'));
    assert.ok('error' in carol);
    assert.deepEqual(
      seen
        .slice(before)
        .map((s) => [s.server, s.method, s.principal])
        .sort(),
      [
        ['crm', 'tools/list', 'carol'],
        ['local', 'tools/list', 'carol'],
      ],
    );
  },
);

test("a shared server's name nobody listed is still looked for as the gateway, once for everyone", async () => {
  const { aggregator, seen } = setup();
  assert.equal(textOf(await aggregator.request(call('local__echo'), as('alice'))), 'local ran echo');
  const lists = seen.filter((s) => s.method === 'tools/list');
  assert.deepEqual(lists.map((s) => [s.server, s.principal]).sort(), [
    ['crm', undefined],
    ['local', undefined],
  ]);
  // bob's miss on the shared server within the second reads nothing again.
  const before = seen.length;
  assert.ok('error' in (await aggregator.request(call('local__nope', 2), as('bob'))));
  assert.equal(seen.length, before);
});

test(
  'a caller who has not connected crm calls a crm tool no list showed: it goes to crm\u2019s stack (which ' +
    'answers with the connect link), not "Unknown tool"; a connected caller\u2019s unknown name stays unknown',
  async () => {
    const { aggregator, seen } = setup((principal) => principal !== 'newcomer');
    const answer = await aggregator.request(call('crm__whoami'), as('newcomer'));
    assert.equal(textOf(answer), 'crm ran whoami');
    assert.deepEqual(seen.at(-1), { server: 'crm', method: 'tools/call', name: 'whoami', principal: 'newcomer' });
    const unknown = await aggregator.request(call('crm__nope', 2), as('alice'));
    assert.ok('error' in unknown && /Unknown tool: crm__nope/.test(unknown.error.message), JSON.stringify(unknown));
    // A name under no per-caller server's prefix is unknown whoever asks.
    const elsewhere = await aggregator.request(call('local__nope', 3), as('newcomer'));
    assert.ok('error' in elsewhere && /Unknown tool/.test(elsewhere.error.message), JSON.stringify(elsewhere));
  },
);

test(
  'a caller who connects within a second of a read that showed them the placeholder has their tools at once: ' +
    'word of the connection lifts their once a second (and theirs alone)',
  async () => {
    const connectedNow = new Set<string>();
    const { aggregator, seen } = setup((principal) => connectedNow.has(principal));
    // Not connected: her list was read (placeholder only) and the call went to crm's stack for the link.
    await aggregator.request(call('crm__read'), as('alice'));
    await aggregator.request(call('crm__read', 2), as('bob'));
    // She connects (here or on another replica), and the store's word of it reaches this aggregator.
    connectedNow.add('alice');
    connectedNow.add('bob');
    aggregator.listsChanged((principal) => principal === 'alice');
    const before = seen.length;
    const answer = await aggregator.request(call('crm__read', 3), as('alice'));
    assert.equal(textOf(answer), 'crm ran read', 'not "Unknown tool": her list was read again as her');
    assert.ok(
      seen.slice(before).some((s) => s.server === 'crm' && s.method === 'tools/list' && s.principal === 'alice'),
    );
    // bob's word has not come: his once a second still holds, and his list is not read again.
    const bobBefore = seen.length;
    await aggregator.request(call('crm__read', 4), as('bob'));
    assert.ok(!seen.slice(bobBefore).some((s) => s.method === 'tools/list'), 'no read as bob within his second');
  },
);

test('a reading as a caller begun before their connection changed is not joined by a call after it', async () => {
  const connectedNow = new Set<string>();
  let releaseFirst: () => void = () => {};
  const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
  let reads = 0;
  const connections: CallerConnections = {
    needs: (server) => (server === 'crm' ? 'account' : undefined),
    connected: async (_server, principal) => {
      // The first reading checks before she connected, and is held until after her connection's word.
      if (reads++ === 0) {
        const was = connectedNow.has(principal);
        await firstHeld;
        return was;
      }
      return connectedNow.has(principal);
    },
  };
  const seen: Seen[] = [];
  const aggregator = new Aggregator({
    upstreams: new Map([['crm', upstream('crm', seen, (principal) => (principal ? ['read'] : null))]]),
    prefixes: new Map([['crm', 'crm']]),
    separator: '__',
    listDeadlineMs: 5_000,
    cursorSecret: undefined,
    log: silentLog,
    connections,
  });
  const early = aggregator.request(call('crm__read'), as('alice'));
  await new Promise((resolve) => setImmediate(resolve));
  connectedNow.add('alice');
  aggregator.listsChanged((principal) => principal === 'alice');
  const late = aggregator.request(call('crm__read', 2), as('alice'));
  releaseFirst();
  await early;
  assert.equal(textOf(await late), 'crm ran read');
  assert.ok(
    seen.some((s) => s.method === 'tools/list' && s.principal === 'alice'),
    'her list was read once connected',
  );
});
