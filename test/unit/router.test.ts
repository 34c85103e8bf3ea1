// The router (src/aggregate/router.ts): a /mcp name placed with one Map lookup, a /servers/<name>/mcp name
// as /mcp shows it, a miss read again only when asked, and calls sent to the owner under its own name.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import type { NamedTarget, UriTarget } from '../../policy/target.js';
import { placed, Router } from '../../src/aggregate/router.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { ListMethod } from '../../protocol/mcp.js';

function fakeUpstream(name: string, seen: JsonRpcRequest[]): Upstream {
  return {
    name,
    events: new EventEmitter(),
    status: () => ({ state: 'ready', era: 'modern', restarts: 0, lastError: undefined }),
    start: async () => {},
    close: async () => {},
    request: async (message: JsonRpcRequest, _options?: RequestOptions): Promise<JsonRpcResponse> => {
      seen.push(structuredClone(message));
      return { jsonrpc: '2.0', id: message.id, result: { from: name } };
    },
  };
}

function setup() {
  const seen: JsonRpcRequest[] = [];
  const refreshed: ListMethod[] = [];
  const upstreams = new Map([
    ['alpha', fakeUpstream('alpha', seen)],
    ['beta', fakeUpstream('beta', seen)],
  ]);
  const router = new Router({
    upstreams,
    prefixes: new Map([
      ['alpha', 'a'],
      ['beta', 'beta'],
    ]),
    separator: '__',
    refresh: async (method) => {
      refreshed.push(method);
      if (method === 'tools/list')
        router.tools.add('beta__late', {
          server: 'beta',
          name: 'late',
          definition: { name: 'beta__late', description: 'late' },
        });
      if (method === 'resources/list') router.resources.addResource('file:///late', 'alpha');
    },
  });
  router.tools.add('a__echo', {
    server: 'alpha',
    name: 'echo',
    definition: { name: 'a__echo', description: 'echoes' },
  });
  return { router, seen, refreshed };
}

const call = (name: unknown, id = 1): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
});

describe('Router', () => {
  test('a listed /mcp name is placed by one lookup, with the definition the lists gave', () => {
    const { router, refreshed } = setup();
    const target = router.resolve(undefined, call('a__echo')) as NamedTarget;
    assert.deepEqual(target, {
      kind: 'tools',
      given: 'a__echo',
      endpoint: undefined,
      server: 'alpha',
      publicName: 'a__echo',
      listed: { server: 'alpha', name: 'echo', definition: { name: 'a__echo', description: 'echoes' } },
      confirmed: false,
    });
    assert.equal(placed(target), true);
    assert.deepEqual(refreshed, []);
  });

  test('a name nobody listed keeps the server its prefix names, and is read again only on confirm', async () => {
    const { router, refreshed } = setup();
    const target = router.resolve(undefined, call('beta__late')) as NamedTarget;
    assert.equal(target.server, 'beta');
    assert.equal(target.listed, undefined);
    assert.equal(placed(target), false);
    assert.deepEqual(refreshed, []);
    const confirmed = (await router.confirm(target)) as NamedTarget;
    assert.deepEqual(refreshed, ['tools/list']);
    assert.deepEqual(confirmed.listed, {
      server: 'beta',
      name: 'late',
      definition: { name: 'beta__late', description: 'late' },
    });
    assert.equal(confirmed.confirmed, true);
  });

  test('on /servers/<name>/mcp a name is judged as /mcp shows it', () => {
    const { router } = setup();
    const target = router.resolve('alpha', call('echo')) as NamedTarget;
    assert.equal(target.publicName, 'a__echo');
    assert.equal(target.server, 'alpha');
    assert.equal(target.endpoint, 'alpha');
    assert.equal(target.listed?.name, 'echo');
  });

  test('a call goes to the owner under its own name; nothing else is looked up', async () => {
    const { router, seen, refreshed } = setup();
    const message = call('a__echo', 7);
    const answer = await router.call(router.resolve(undefined, message) as NamedTarget, message, {});
    assert.deepEqual(answer, { jsonrpc: '2.0', id: 7, result: { from: 'alpha' } });
    assert.equal(seen[0]!.params?.name, 'echo');
    assert.deepEqual(refreshed, []);
  });

  test("a name nobody serves, or out of reach, is answered in /mcp's words", async () => {
    const { router, seen } = setup();
    const unknown = await router.call(
      (await router.confirm(router.resolve(undefined, call('a__nope', 2)))) as NamedTarget,
      call('a__nope', 2),
      {},
    );
    assert.deepEqual(unknown, {
      jsonrpc: '2.0',
      id: 2,
      error: {
        code: -32602,
        message: "Unknown tool: a__nope; its prefix names upstream 'alpha', but it does not list a tool by that name",
      },
    });
    const reach = { key: 'k', reaches: (server: string) => server !== 'alpha', seesAll: () => false };
    const hidden = await router.call(router.resolve(undefined, call('a__echo', 3)) as NamedTarget, call('a__echo', 3), {
      reach,
    });
    assert.deepEqual(hidden, {
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -32602,
        message: 'Unknown tool: a__echo; names on /mcp are <server>__<name> (list them with tools/list)',
      },
    });
    const notString = await router.call(router.resolve(undefined, call(42, 4)) as NamedTarget, call(42, 4), {});
    assert.deepEqual(notString, {
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32602, message: 'params.name must be a string' },
    });
    assert.equal(seen.length, 0);
  });

  test('resources: the listed owner, several owners, or a read again on confirm', async () => {
    const { router, refreshed } = setup();
    router.resources.addResource('file:///both', 'alpha');
    router.resources.addResource('file:///both', 'beta');
    const read = (uri: string): JsonRpcRequest => ({
      jsonrpc: '2.0',
      id: 5,
      method: 'resources/read',
      params: { uri },
    });
    const both = router.resolve(undefined, read('file:///both')) as UriTarget;
    assert.deepEqual(both.ambiguous, ['alpha', 'beta']);
    assert.equal(placed(both), true);
    assert.match(JSON.stringify(await router.call(both, read('file:///both'), {})), /offered by alpha and beta/);
    const late = router.resolve(undefined, read('file:///late')) as UriTarget;
    assert.equal(placed(late), false);
    const confirmed = (await router.confirm(late)) as UriTarget;
    assert.deepEqual(refreshed.sort(), ['resources/list', 'resources/templates/list']);
    assert.equal(confirmed.owner, 'alpha');
    assert.deepEqual((router.resolve('beta', read('x:y')) as UriTarget).owner, 'beta');
  });

  test(
    'a ui:// URI is placed by its namespace alone, ' + 'and reaches its owner under its own URI (a read, a completion)',
    async () => {
      const { router, seen, refreshed } = setup();
      const read: JsonRpcRequest = {
        jsonrpc: '2.0',
        id: 6,
        method: 'resources/read',
        params: { uri: 'ui://beta__dashboard/view.html' },
      };
      const target = router.resolve(undefined, read) as UriTarget;
      assert.deepEqual(target, {
        kind: 'resources',
        uri: 'ui://beta__dashboard/view.html',
        endpoint: undefined,
        owner: 'beta',
        ambiguous: undefined,
        confirmed: true,
        ownUri: 'ui://dashboard/view.html',
      });
      assert.equal(placed(target), true, 'no list is read for it');
      await router.call(target, read, {});
      const complete: JsonRpcRequest = {
        jsonrpc: '2.0',
        id: 7,
        method: 'completion/complete',
        params: { ref: { type: 'ref/resource', uri: 'ui://a__pages/{page}' }, argument: { name: 'page', value: 's' } },
      };
      await router.call(router.resolve(undefined, complete) as UriTarget, complete, {});
      assert.deepEqual(
        seen.map((m) => [m.method, m.params]),
        [
          ['resources/read', { uri: 'ui://dashboard/view.html' }],
          [
            'completion/complete',
            { ref: { type: 'ref/resource', uri: 'ui://pages/{page}' }, argument: { name: 'page', value: 's' } },
          ],
        ],
      );
      const nobody = router.resolve(undefined, { ...read, params: { uri: 'ui://nobody__x' } }) as UriTarget;
      assert.equal(nobody.owner, undefined);
      assert.equal(placed(nobody), true);
      assert.deepEqual(await router.call(nobody, { ...read, params: { uri: 'ui://nobody__x' } }, {}), {
        jsonrpc: '2.0',
        id: 6,
        error: {
          code: -32602,
          message: 'Resource not found: no upstream lists ui://nobody__x or a template that matches it',
          data: { uri: 'ui://nobody__x' },
        },
      });
      assert.deepEqual(refreshed, []);
    },
  );

  test('lists and other methods need no placing', () => {
    const { router } = setup();
    assert.deepEqual(router.resolve(undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list' }), { kind: 'none' });
  });
});
