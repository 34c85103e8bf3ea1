// What the exact-number change left behind: places that met a number kept as written (JSON.rawJSON, an object
// to JavaScript) and took it for something else. Tracing must not fail on a 64-bit id; a policy condition
// reads such a number as the double it read before; a ttlMs beyond a double still lets a list be kept.
// Node.js 22 and later (Node.js 20 parses every number as a double, which none of this meets).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ListCache, type CacheKey } from '../../cache/list-cache.js';
import { MemoryStore } from '../../cache/memory-store.js';
import { compileCondition } from '../../policy/conditions.js';
import type { Principal } from '../../policy/principal.js';
import { mergeDiscover } from '../../src/aggregate/merged-discover.js';
import { silentLog } from '../../infra/log.js';
import { ClientRequests } from '../../src/legacy-client/client-requests.js';
import { SessionCodec } from '../../src/legacy-client/session-token.js';
import { parseJson } from '../../protocol/exact-json.js';
import { onlyOnNode } from '../services.js';
import type { JsonObject, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { callAttributes } from '../../src/telemetry/attributes.js';

const BIG = '12345678901234567890';
const U64_MAX = '18446744073709551615';
const principal: Principal = { id: 'alice', groups: [], scopes: [], via: 'anonymous' };

describe('on Node.js 22 and later', { skip: onlyOnNode(22, 'Node.js 20 keeps no number raw') }, () => {
  test('a traced request with a 64-bit id gets its span attributes, the id written as sent', () => {
    const message = parseJson(`{"jsonrpc":"2.0","id":${BIG},"method":"tools/list","params":{}}`) as JsonRpcRequest;
    assert.equal(callAttributes(message)['jsonrpc.request.id'], BIG);
    const small = parseJson('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}') as JsonRpcRequest;
    assert.equal(callAttributes(small)['jsonrpc.request.id'], '7');
    const text = parseJson('{"jsonrpc":"2.0","id":"abc","method":"tools/list","params":{}}') as JsonRpcRequest;
    assert.equal(callAttributes(text)['jsonrpc.request.id'], 'abc');
  });

  test('a when: condition reads a 64-bit argument as the number it is, not as a map', () => {
    const positive = compileCondition('args.user_id > 0');
    const args = parseJson(`{"user_id":${BIG}}`);
    assert.deepEqual(positive({ args, principal, tool: 't', server: 's' }), { ok: true });
    const nested = compileCondition('args.filter.ids.all(i, i > 0) && args.amount < 2.0');
    const more = parseJson(`{"filter":{"ids":[1,${BIG}]},"amount":1.00000000000000000001}`);
    // The fraction no double holds is refused once read, never compared rounded (test/unit/cel-exact-numbers.test.ts).
    assert.equal(nested({ args: more, principal, tool: 't', server: 's' }).ok, false);
    assert.deepEqual(
      compileCondition('args.filter.ids.all(i, i > 0)')({ args: more, principal, tool: 't', server: 's' }),
      { ok: true },
    );
    // What the server is sent is not touched by reading it.
    assert.equal(JSON.stringify(more), `{"filter":{"ids":[1,${BIG}]},"amount":1.00000000000000000001}`);
  });

  test('a list whose ttlMs is beyond a double (u64::MAX for "keep it") is kept for maxTtlMs', async () => {
    const cache = new ListCache(new MemoryStore({ maxEntries: 100, maxBytes: 1 << 20 }), {
      minTtlMs: 0,
      maxTtlMs: 60_000,
      log: silentLog,
    });
    const key: CacheKey = { upstream: 'a', method: 'tools/list', variant: '', context: 'alice' };
    let fetches = 0;
    const fetch = async (): Promise<JsonRpcResponse> => {
      fetches++;
      return parseJson(
        `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[],` +
          `"ttlMs":${U64_MAX},"cacheScope":"public"}}`,
      ) as JsonRpcResponse;
    };
    await cache.get(key, 1, fetch);
    const second = await cache.get(key, 2, fetch);
    assert.equal(second.hit, true);
    assert.equal(fetches, 1);
  });

  test('/mcp’s server/discover keeps a ttlMs beyond a double as a long one, not as 0', () => {
    const response = parseJson(
      `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{},"ttlMs":${U64_MAX},"cacheScope":"public"}}`,
    ) as JsonRpcResponse;
    const shorter = {
      jsonrpc: '2.0',
      id: 1,
      result: { capabilities: {}, ttlMs: 5_000, cacheScope: 'public' },
    } as JsonRpcResponse;
    const merged = mergeDiscover(
      [
        { server: 'a', response },
        { server: 'b', response: shorter },
      ],
      '__',
      undefined,
    ) as JsonObject;
    assert.equal(merged.ttlMs, 5_000);
  });

  test('a 2025 client answering with a 64-bit id no question had is told nobody asked, not an error', async () => {
    const requests = new ClientRequests(undefined, silentLog);
    const answer = parseJson(`{"jsonrpc":"2.0","id":${BIG},"result":{}}`) as JsonObject;
    assert.equal(await requests.answer('s', answer), 'unknown');
  });

  test('a 2025 client’s capabilities keep their numbers in its session, as every request hands them on', () => {
    const codec = new SessionCodec(Buffer.alloc(32, 7));
    const capabilities = parseJson(`{"experimental":{"batch":{"maxId":${BIG}}}}`) as JsonObject;
    const session = {
      id: 's',
      protocolVersion: '2025-11-25',
      capabilities,
      clientInfo: undefined,
      endpoint: 'mcp',
      caller: '',
      expiresAt: Date.now() + 60_000,
    };
    const opened = codec.open(codec.mint(session));
    assert.equal(JSON.stringify(opened?.capabilities), `{"experimental":{"batch":{"maxId":${BIG}}}}`);
  });
});
