// A redacted task result against the outputSchema of the tool that created the task, without a gateway
// (src/guardrails/guarded-call.ts for tasks/get, task-status.ts for a listen's status): the definition is found
// by the tool's /mcp name through /mcp's router; a redaction its pattern refuses becomes the refusal (tasks/get)
// or a failed status carrying it; one it allows passes; without /mcp (no router, so no definition) the redacted
// result is sent unchecked, as docs/guardrails.md says.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GuardrailSet } from '../../policy/guardrails/rule-set.js';
import { PLAIN_TARGET, type Target } from '../../policy/target.js';
import type { JsonObject, JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { guardedRequest, type GuardrailRecorder } from '../../src/guardrails/guarded-call.js';
import { judgedTaskStatus } from '../../src/guardrails/task-status.js';

const CHARGE = {
  name: 'charge',
  inputSchema: { type: 'object' },
  outputSchema: {
    type: 'object',
    properties: { customer: { type: 'string' }, card: { type: 'string', pattern: '^[0-9 ]+$' } },
    required: ['customer', 'card'],
  },
};

/** /mcp's router as the step asks it: only crm__charge is listed, with its definition. */
const router = {
  resolve(_server: string | undefined, message: JsonRpcRequest): Target {
    const name = message.params?.name;
    const listed = name === 'crm__charge' ? { server: 'crm', name: 'charge', definition: CHARGE } : undefined;
    return {
      kind: 'tools',
      given: name,
      endpoint: undefined,
      server: 'crm',
      publicName: name as string,
      listed,
      confirmed: true,
    };
  },
};

const set = GuardrailSet.compile([{ name: 'cards', on: ['results'], detect: ['creditCard'], action: 'redact' }], {
  servers: new Set(['crm']),
  endpoints: new Set(['/mcp']),
});
const principal = { id: 'alice', groups: [], scopes: [], via: 'api-key' as const };
const withMcp = { principal, path: '/mcp', target: PLAIN_TARGET, server: undefined, edge: { router } };
const withoutMcp = { principal, path: '/servers/crm/mcp', target: PLAIN_TARGET, server: 'crm' };
const recorder: GuardrailRecorder = { audit: undefined, decision: () => {} };

const result = (record: JsonObject) => ({
  resultType: 'complete',
  content: [{ type: 'text', text: JSON.stringify(record) }],
  structuredContent: record,
});
const status = (record: JsonObject): JsonObject => ({
  taskId: 'gwtask1.x',
  status: 'completed',
  createdAt: '2026-12-07T10:00:00Z',
  result: result(record),
});

describe("a redacted task result and its tool's outputSchema", () => {
  test('tasks/get: a redaction the pattern refuses is refused; one it allows passes', async () => {
    const get = (record: JsonObject) =>
      guardedRequest(
        set,
        { ...withMcp, task: { ref: { server: 'crm' } }, taskTool: 'crm__charge' },
        recorder,
        { jsonrpc: '2.0', id: 8, method: 'tasks/get', params: { taskId: 'gwtask1.x' } },
        {},
        async () => ({ jsonrpc: '2.0', id: 8, result: { resultType: 'complete', ...status(record) } }),
      );
    const refused = await get({ customer: 'Jane Roe', card: '4111 1111 1111 1111' });
    assert.ok('error' in refused, JSON.stringify(refused));
    assert.match(refused.error.message, /^Refused by guardrail cards: the result held creditCard \(.*outputSchema/);
    const passed = await get({ customer: 'Jane Roe, card 4111 1111 1111 1111', card: '0000' });
    assert.ok('result' in passed, JSON.stringify(passed));
    assert.deepEqual((passed.result.result as JsonObject).structuredContent, {
      customer: 'Jane Roe, card [redacted:creditCard]',
      card: '0000',
    });
  });

  test('a listen: a redaction the pattern refuses shows the task failed with the refusal', async () => {
    const shown = await judgedTaskStatus(
      set,
      withMcp,
      recorder,
      'crm',
      'crm__charge',
      status({ customer: 'Jane Roe', card: '4111 1111 1111 1111' }),
    );
    assert.equal(shown.status, 'failed');
    assert.equal(shown.result, undefined);
    assert.equal(shown.taskId, 'gwtask1.x');
    assert.match((shown.error as JsonObject).message as string, /outputSchema/);
  });

  test('without /mcp there is no definition to check against: the redacted result is sent', async () => {
    const shown = await judgedTaskStatus(
      set,
      withoutMcp,
      recorder,
      'crm',
      undefined,
      status({ customer: 'Jane Roe', card: '4111 1111 1111 1111' }),
    );
    assert.equal(shown.status, 'completed');
    assert.deepEqual((shown.result as JsonObject).structuredContent, {
      customer: 'Jane Roe',
      card: '[redacted:creditCard]',
    });
  });
});
