import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CursorCodec } from '../../src/aggregate/cursor.js';
import { MergedPages } from '../../src/aggregate/merged-pages.js';
import { type JsonObject, type JsonRpcResponse, responseBytes, serializeResponse } from '../../protocol/jsonrpc.js';
import { mergeDiscover } from '../../src/aggregate/merged-discover.js';
import { NameRoutes } from '../../src/aggregate/name-routes.js';
import { PUBLIC_NAME, publicName } from '../../protocol/public-names.js';
import { ResourceOwners, templatePattern } from '../../src/aggregate/resource-owners.js';

test('publicName: plain names are prefix + separator + name', () => {
  assert.equal(publicName('github', '__', 'create_issue'), 'github__create_issue');
});

test('publicName: names with other characters or over 64 are made to fit, deterministically and distinctly', () => {
  const dotted = publicName('fs', '__', 'read.file');
  assert.match(dotted, PUBLIC_NAME);
  assert.match(dotted, /^fs__read_file-[0-9a-f]{8}$/);
  assert.notEqual(dotted, publicName('fs', '__', 'read_file'), 'a sanitised name cannot take a plain one');
  assert.equal(dotted, publicName('fs', '__', 'read.file'));
  const long = publicName('p', '__', 'x'.repeat(100));
  assert.equal(long.length, 64);
  assert.notEqual(long, publicName('p', '__', 'x'.repeat(101)));
  assert.match(publicName('p', '__', 'ünïcode'), PUBLIC_NAME);
});

test('NameRoutes: a second owner for one name is reported, the first kept; forgetting a server frees its names', () => {
  const routes = new NameRoutes();
  assert.equal(routes.add('a__x', { server: 'a', name: 'x' }), undefined);
  assert.equal(routes.add('a__x', { server: 'a', name: 'x' }), undefined, 'the same route again is no clash');
  assert.deepEqual(routes.add('a__x', { server: 'b', name: 'y' }), { server: 'a', name: 'x' });
  routes.forgetServer('a');
  assert.equal(routes.get('a__x'), undefined);
});

test('CursorCodec: round trip; bound to its method, its key and the configured servers', () => {
  const servers = new Set(['a', 'b', 'c']);
  const codec = new CursorCodec('a secret of sixteen+');
  const cursor = codec.encode('tools/list', [
    ['a', 'abc'],
    ['c', null],
  ]);
  assert.deepEqual(codec.decode('tools/list', cursor, servers), [
    ['a', 'abc'],
    ['c', null],
  ]);
  assert.equal(codec.decode('prompts/list', cursor, servers), undefined);
  assert.equal(codec.decode('tools/list', cursor, new Set(['a', 'b'])), undefined, 'a server no longer configured');
  assert.equal(new CursorCodec('another secret 1234').decode('tools/list', cursor, servers), undefined);
  assert.deepEqual(
    new CursorCodec('a secret of sixteen+').decode('tools/list', cursor, new Set(['c', 'a'])),
    [
      ['a', 'abc'],
      ['c', null],
    ],
    'replicas sharing a secret, servers in another order',
  );
  for (const bad of ['', '.', 'x.y', `${cursor}x`])
    assert.equal(codec.decode('tools/list', bad, servers), undefined, bad);
});

test('templatePattern: simple, reserved and query expansions', () => {
  assert.ok(templatePattern('file:///{path}').test('file:///a.txt'));
  assert.ok(!templatePattern('file:///{path}').test('file:///dir/a.txt'), '{x} is one segment');
  assert.ok(templatePattern('file:///{+path}').test('file:///dir/a.txt'));
  assert.ok(templatePattern('search://q{?term,page}').test('search://q?term=a&page=2'));
  assert.ok(!templatePattern('a://{x}/b').test('z://1/b'));
  assert.ok(templatePattern('weird.(chars)+/{id}').test('weird.(chars)+/7'), 'literal parts are escaped');
});

test('ResourceOwners: exact URIs before templates; ambiguity reported; forgetting a server', () => {
  const owners = new ResourceOwners();
  owners.addResource('doc://1', 'a');
  owners.addTemplate('doc://{id}', 'b');
  assert.deepEqual(owners.owner('doc://1'), { server: 'a' });
  assert.deepEqual(owners.owner('doc://2'), { server: 'b' });
  assert.deepEqual(owners.owner('doc://{id}'), { server: 'b' }, 'a template string belongs to whoever listed it');
  owners.addResource('doc://1', 'c');
  assert.deepEqual(owners.owner('doc://1'), { ambiguous: ['a', 'c'] });
  owners.forgetServer('c');
  owners.forgetServer('b');
  assert.deepEqual(owners.owner('doc://1'), { server: 'a' });
  assert.equal(owners.owner('doc://2'), undefined);
});

test('ResourceOwners: a template without a scheme in its fixed part is not used to route', () => {
  const owners = new ResourceOwners();
  assert.equal(owners.addTemplate('{+anything}', 'greedy'), false);
  assert.equal(owners.addTemplate('file:///{+path}', 'fs'), true);
  assert.deepEqual(owners.owner('secret://token/123'), undefined);
  assert.deepEqual(owners.owner('file:///etc/hosts'), { server: 'fs' });
});

test('MergedPages: kept while fresh, answered pre-serialised with the time left; private pages per caller', () => {
  let now = 1_000;
  const pages = new MergedPages(() => now);
  pages.set('tools/list', '', 'alice', {
    resultType: 'complete',
    tools: [{ name: 'a__x' }],
    ttlMs: 500,
    cacheScope: 'public',
  });
  now += 200;
  const hit = pages.get(7, 'tools/list', '', 'bob')!;
  assert.equal(hit.id, 7);
  const text = serializeResponse(hit);
  assert.deepEqual(JSON.parse(text), {
    jsonrpc: '2.0',
    id: 7,
    result: { resultType: 'complete', tools: [{ name: 'a__x' }], cacheScope: 'public', ttlMs: 300 },
  });
  assert.deepEqual(JSON.parse(text).result, (hit as { result: unknown }).result, 'the bytes say what the object says');
  now += 300;
  assert.equal(pages.get(8, 'tools/list', '', 'bob'), undefined, 'stale');

  pages.set('tools/list', '', 'alice', { resultType: 'complete', tools: [], ttlMs: 500, cacheScope: 'private' });
  assert.ok(pages.get(1, 'tools/list', '', 'alice'));
  assert.equal(pages.get(1, 'tools/list', '', 'bob'), undefined, "bob never gets alice's private page");
  pages.set('tools/list', '', undefined, { resultType: 'complete', tools: [], ttlMs: 0, cacheScope: 'public' });
  pages.clear();
  assert.equal(pages.get(1, 'tools/list', '', 'alice'), undefined);
});

test('serializeResponse: a plain response is JSON.stringify; ids of both kinds', () => {
  const plain = { jsonrpc: '2.0' as const, id: 'x', result: { resultType: 'complete' } };
  assert.equal(serializeResponse(plain), JSON.stringify(plain));
  assert.deepEqual(responseBytes(plain), [Buffer.from(JSON.stringify(plain))]);
});

test(
  'responseBytes: a cached page is written from the same bytes on every hit, ' + 'and says what serializeResponse says',
  () => {
    let now = 0;
    const pages = new MergedPages(() => now);
    const tools = Array.from({ length: 50 }, (_, i) => ({
      name: `s__t${i}`,
      description: `été ${i} 🚀`,
      inputSchema: { type: 'object' },
    }));
    pages.set('tools/list', '', undefined, { resultType: 'complete', tools, ttlMs: 1_000, cacheScope: 'public' });
    const first = responseBytes(pages.get('a"b', 'tools/list', '', undefined)!);
    now += 250;
    const hit = pages.get(42, 'tools/list', '', undefined)!;
    const second = responseBytes(hit);
    const page = first.find((piece) => piece.length > 1_000)!;
    assert.ok(second.includes(page), 'the page bytes are shared, not copied per request');
    const text = Buffer.concat(second).toString('utf8');
    assert.equal(text, serializeResponse(hit));
    assert.deepEqual(JSON.parse(text), {
      jsonrpc: '2.0',
      id: 42,
      result: { resultType: 'complete', tools, cacheScope: 'public', ttlMs: 750 },
    });
    assert.equal(JSON.parse(Buffer.concat(first).toString('utf8')).id, 'a"b');
  },
);

test(
  "mergeDiscover: /mcp offers resources.subscribe when a server does (it relays subscriptions to the URI's " +
    'owner), never invents it',
  () => {
    const discover = (server: string, capabilities: JsonObject) => ({
      server,
      response: { jsonrpc: '2.0', id: 1, result: { capabilities, ttlMs: 0, cacheScope: 'public' } } as JsonRpcResponse,
    });
    const plain = discover('plain', { resources: { listChanged: true } });
    const subscribing = discover('subscribing', { resources: { subscribe: true }, tools: {} });
    assert.deepEqual(mergeDiscover([plain, subscribing], '__', undefined).capabilities, {
      resources: { listChanged: true, subscribe: true },
      tools: {},
    });
    assert.deepEqual(mergeDiscover([plain], '__', undefined).capabilities, { resources: { listChanged: true } });
    assert.deepEqual(
      mergeDiscover([discover('odd', { tools: { subscribe: true } })], '__', undefined).capabilities,
      { tools: {} },
      'subscribe is a resources setting only',
    );
  },
);
