// Numbers a double cannot hold exactly keep their digits through parse and stringify (Node.js 22 and later);
// ids and progress tokens written so are still integers; Mcp-Param headers compare against them digit for
// digit; the list cache's copies and the Redis store keep them. On Node.js 20, parsing is JSON.parse's.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { RedisStore } from '../../cache/redis-store.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/edge/http-rules.js';
import { ToolHeaderIndex } from '../../src/edge/param-headers.js';
import { silentLog } from '../../infra/log.js';
import { copyJson, isJsonInteger, isRawNumber, KEEPS_EXACT_NUMBERS, parseJson } from '../../protocol/exact-json.js';
import { isObject, isValidId, parseMessage } from '../../protocol/jsonrpc.js';
import { sharedRedis, onlyOnNode } from '../services.js';
import { until } from '../e2e/harness.js';

const BIG = '12345678901234567890';
const INEXACT = [
  BIG,
  '90071992.54740993',
  '-9223372036854775809',
  '9007199254740993',
  '1e400',
  '-1e400',
  '1e-400',
  '0.12345678901234567890123',
  '123456789.123456789',
];
// (1e21 and the like are kept raw too: integers past 2^53 count as inexact however they are spelled. Raw is exact.)
const EXACT = [
  '0',
  '-1',
  '42',
  '3.14159',
  '0.1',
  '2.5e-300',
  '1.5e-7',
  '9007199254740991',
  '1234567890123456',
  '-0.000123',
];
const redis = await sharedRedis('the exact-number Redis round trip');

describe('on Node.js 22 and later', {
  skip: onlyOnNode(22, 'Node.js 20 has neither JSON.rawJSON nor a reviver source'),
}, () => {
  test('every number a double cannot hold is written back as it came', () => {
    for (const literal of INEXACT) {
      const text = `{"a":[${literal}],"b":{"c":${literal}}}`;
      const value = parseJson(text) as { a: unknown[]; b: { c: unknown } };
      assert.ok(isRawNumber(value.a[0]) && isRawNumber(value.b.c), `${literal} is kept raw`);
      assert.equal(JSON.stringify(value), text, literal);
    }
  });

  test('numbers a double holds stay plain numbers, and strings of digits stay strings', () => {
    for (const literal of EXACT) {
      const value = parseJson(`{"n":${literal},"s":"${BIG}"}`) as { n: unknown; s: unknown };
      assert.equal(typeof value.n, 'number', literal);
      assert.equal(value.n, Number(literal));
      assert.equal(value.s, BIG);
    }
  });

  test('an id or progressToken beyond a double is still an integer; 1e400 is not', () => {
    const request = parseJson(`{"jsonrpc":"2.0","id":${BIG},"method":"tools/list","params":{}}`);
    assert.equal(parseMessage(request).kind, 'request');
    assert.equal(JSON.stringify((request as { id: unknown }).id), BIG);
    assert.ok(isJsonInteger((parseJson(`[${BIG}]`) as unknown[])[0]));
    assert.equal(isValidId((parseJson('[1e400]') as unknown[])[0]), false);
    assert.equal(isValidId((parseJson('[0.12345678901234567890123]') as unknown[])[0]), false);
  });

  test('copyJson keeps raw numbers raw, where structuredClone cannot copy them at all', () => {
    const value = parseJson(`{"n":${BIG}}`);
    assert.equal(JSON.stringify(copyJson(value)), `{"n":${BIG}}`);
    assert.throws(() => structuredClone(value), { name: 'DataCloneError' }, 'why the list cache copies with copyJson');
  });

  test('an Mcp-Param header mirroring a 64-bit argument is compared digit for digit', () => {
    const index = new ToolHeaderIndex();
    index.learn({
      tools: [
        {
          name: 'lookup',
          inputSchema: { type: 'object', properties: { id: { type: 'integer', 'x-mcp-header': 'Id' } } },
        },
      ],
    });
    const args = parseJson(`{"id":${BIG}}`) as object;
    const header = (value: string) => (name: string) => (name === 'mcp-param-id' ? value : undefined);
    assert.equal(index.check('lookup', args, header(BIG)), undefined);
    assert.equal(
      index.check('lookup', args, header(`${BIG}.0`)),
      undefined,
      'the same integer spelled with a fraction',
    );
    assert.match(
      index.check('lookup', args, header('12345678901234567000')) ?? '',
      /does not match/,
      'the double it would have become is another number',
    );
  });

  test('the Redis store reads back the digits it was given', { skip: redis.skip }, async () => {
    const keyPrefix = `mcp-gateway-test:${randomUUID()}:`;
    const store = new RedisStore({ url: 'redis://127.0.0.1:6379', keyPrefix, log: silentLog });
    try {
      const entry = {
        result: parseJson(
          `{"resultType":"complete","tools":[{"name":"t","inputSchema":{"default":${BIG}}}]}`,
        ) as Record<string, unknown>,
        expiresAt: Date.now() + 60_000,
      };
      let read: unknown;
      assert.ok(
        await until(
          async () => {
            await store.write('g', 'f', entry, 60_000);
            read = await store.read('g', 'f');
            return read !== undefined;
          },
          5_000,
          50,
        ),
        'the store connected and stored the entry',
      );
      assert.match(JSON.stringify(read), new RegExp(`"default":${BIG}\\}`));
    } finally {
      await store.dropGroup('g');
      await store.close();
    }
  });
});

describe('on Node.js 20', { skip: onlyOnNode(20, 'this Node.js keeps numbers exact') }, () => {
  test('parsing is JSON.parse: a number beyond a double loses its last digits (the gateway warns at start)', () => {
    assert.equal(JSON.stringify(parseJson(`{"n":${BIG}}`)), '{"n":12345678901234567000}');
    assert.equal(isRawNumber(parseJson(`[${BIG}]`)), false);
  });
});

test('a number kept as written is no level of nesting: a body at the depth limit with one at the bottom is accepted', {
  skip: !KEEPS_EXACT_NUMBERS,
}, () => {
  const nested = (depth: number, leaf: string) => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
  assert.equal(
    nestsDeeperThan(parseJson(nested(MAX_JSON_DEPTH, BIG)), MAX_JSON_DEPTH),
    false,
    'as with a number a double holds',
  );
  assert.equal(nestsDeeperThan(parseJson(nested(MAX_JSON_DEPTH, '1')), MAX_JSON_DEPTH), false);
  assert.equal(
    nestsDeeperThan(parseJson(nested(MAX_JSON_DEPTH + 1, BIG)), MAX_JSON_DEPTH),
    true,
    'one array too many is still refused',
  );
});

test('an object of the message’s own with a rawJSON key is still an object, not a number kept as written', () => {
  const value = parseJson(`{"a":{"rawJSON":"${BIG}"},"b":${BIG}}`) as { a: unknown; b: unknown };
  assert.equal(isRawNumber(value.a), false);
  assert.equal(isObject(value.a), true);
  assert.equal(
    JSON.stringify(value),
    `{"a":{"rawJSON":"${BIG}"},"b":${KEEPS_EXACT_NUMBERS ? BIG : '12345678901234567000'}}`,
  );
});
