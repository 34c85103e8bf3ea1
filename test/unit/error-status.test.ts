// The HTTP status rule for answers (protocol/error-status.ts) and the resultType the gateway adds to a
// modern upstream's result (bridge/modern-result.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ResultFiller } from '../../bridge/modern-result.js';
import { httpStatusOf, UPSTREAM_STATUS, type MarkedResponse } from '../../protocol/error-status.js';
import type { JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { recordingLog } from '../recording-log.js';

const failure = (code: number, upstreamStatus?: number): JsonRpcResponse => {
  const response: MarkedResponse = { jsonrpc: '2.0', id: 1, error: { code, message: 'x' } };
  if (upstreamStatus !== undefined) response[UPSTREAM_STATUS] = upstreamStatus;
  return response;
};

describe('httpStatusOf', () => {
  test('results travel with 200', () => {
    assert.equal(httpStatusOf({ jsonrpc: '2.0', id: 1, result: { resultType: 'complete' } }), 200);
  });

  test(
    'the codes the spec gives a status: -32020, -32021, -32022 → 400; ' + '-32601 → 404 (wherever they come from)',
    () => {
      for (const code of [-32020, -32021, -32022]) assert.equal(httpStatusOf(failure(code)), 400, String(code));
      assert.equal(httpStatusOf(failure(-32601)), 404);
      assert.equal(httpStatusOf(failure(-32601, 200)), 404);
    },
  );

  test('-32602 is 400 only when an HTTP upstream answered it with 400 (an envelope rejection); otherwise 200', () => {
    assert.equal(httpStatusOf(failure(-32602, 400)), 400);
    assert.equal(httpStatusOf(failure(-32602, 200)), 200);
    // a stdio child's or the gateway's own: unknown tool, bad arguments
    assert.equal(httpStatusOf(failure(-32602)), 200);
  });

  test('every other error travels with 200, whatever status the upstream used', () => {
    for (const code of [-32603, -32600, -32700, -32002, -32000, 42])
      assert.equal(httpStatusOf(failure(code, 500)), 200, String(code));
  });
});

describe('ResultFiller', () => {
  test('adds resultType "complete" at the end, keeps every other key in order, and says so once', () => {
    const { log, messages } = recordingLog();
    const filler = new ResultFiller(log);
    const first: JsonRpcResponse = {
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: 'a' }], isError: false },
    };
    filler.fill('tools/call', first);
    assert.equal(
      JSON.stringify(first),
      '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}],' +
        '"isError":false,"resultType":"complete"}}',
    );
    const second: JsonRpcResponse = { jsonrpc: '2.0', id: 2, result: { content: [] } };
    filler.fill('tools/call', second);
    assert.equal((second as { result: Record<string, unknown> }).result.resultType, 'complete');
    assert.equal(messages('info').length, 1);
    assert.match(messages('info')[0]!, /resultType/);
  });

  test('a cacheable result without ttlMs or cacheScope gets 0 and "private" appended, each said once', () => {
    const { log, messages } = recordingLog();
    const filler = new ResultFiller(log);
    const first: JsonRpcResponse = { jsonrpc: '2.0', id: 1, result: { tools: [] } };
    filler.fill('tools/list', first);
    assert.equal(
      JSON.stringify(first),
      '{"jsonrpc":"2.0","id":1,"result":{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}}',
    );
    const kept: JsonRpcResponse = {
      jsonrpc: '2.0',
      id: 2,
      result: { prompts: [], resultType: 'complete', ttlMs: 5000, cacheScope: 'public' },
    };
    filler.fill('prompts/list', kept);
    assert.equal(
      JSON.stringify(kept),
      '{"jsonrpc":"2.0","id":2,"result":{"prompts":[],"resultType":"complete","ttlMs":5000,"cacheScope":"public"}}',
    );
    filler.fill('resources/list', { jsonrpc: '2.0', id: 3, result: { resources: [] } });
    assert.deepEqual(
      messages('info').map((line) => /without (\w+)/.exec(line)?.[1]),
      ['resultType', 'ttlMs', 'cacheScope'],
    );
  });

  test('an input_required result is not given cache fields', () => {
    const filler = new ResultFiller(recordingLog().log);
    const asking: JsonRpcResponse = {
      jsonrpc: '2.0',
      id: 1,
      result: { resultType: 'input_required', requestState: 'x' },
    };
    filler.fill('resources/read', asking);
    assert.equal(
      JSON.stringify(asking),
      '{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"x"}}',
    );
  });

  test('leaves results that carry one (any value) and errors alone', () => {
    const { log, messages } = recordingLog();
    const filler = new ResultFiller(log);
    const inputRequired: JsonRpcResponse = {
      jsonrpc: '2.0',
      id: 1,
      result: { resultType: 'input_required', requestState: 's' },
    };
    const error: JsonRpcResponse = { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Unknown tool' } };
    const before = JSON.stringify([inputRequired, error]);
    filler.fill('tools/call', inputRequired);
    filler.fill('tools/call', error);
    assert.equal(JSON.stringify([inputRequired, error]), before);
    assert.equal(messages('info').length, 0);
  });
});
