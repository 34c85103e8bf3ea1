// The guardrails step without a gateway (src/guardrails/guarded-call.ts): arguments redacted in place and in
// their Mcp-Param-* header mirrors (Base64 form included) before `send`, arguments blocked without `send`
// being called at all, a stream message that must be blocked dropped and the answer replaced by the refusal,
// a cached answer (pre-serialised) never changed in place; a task's input responses and a task's status pushed
// on a listen stream (src/guardrails/task-status.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RequestOptions } from '../../bridge/upstream.js';
import { encodeHeaderValue } from '../../bridge/http/mcp-headers.js';
import { GuardrailSet } from '../../policy/guardrails/rule-set.js';
import type { GuardrailSetting } from '../../policy/guardrails/settings.js';
import { PLAIN_TARGET } from '../../policy/target.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { guardedRequest, type GuardrailRecorder } from '../../src/guardrails/guarded-call.js';
import { judgedTaskStatus } from '../../src/guardrails/task-status.js';

// AWS's documented example key, assembled so no scanner flags this file.
const AWS_KEY = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');
const known = { servers: new Set(['crm']), endpoints: new Set(['/mcp', '/servers/crm/mcp']) };
const call = {
  principal: { id: 'alice', groups: [], scopes: [], via: 'api-key' as const },
  path: '/servers/crm/mcp',
  target: PLAIN_TARGET,
  server: 'crm',
};

function recorder(): GuardrailRecorder & { decisions: string[] } {
  const decisions: string[] = [];
  return {
    audit: undefined,
    decisions,
    decision: (rule, action, stage) => decisions.push(`${rule} ${action} ${stage}`),
  };
}

const toolCall = (args: Record<string, unknown>, meta?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'echo', arguments: args, ...(meta ? { _meta: meta } : {}) },
});

const rules = (...settings: GuardrailSetting[]) => GuardrailSet.compile(settings, known);

describe('the guardrails step', () => {
  test('arguments are redacted in place and in their Mcp-Param-* mirrors before the server sees them', async () => {
    const set = rules({ name: 'cards-in', on: ['arguments'], detect: ['creditCard'], action: 'redact' });
    const message = toolCall({ card: '4111111111111111', note: 'carte 4111 1111 1111 1111 é', other: 'x' });
    const options: RequestOptions = {
      forwardHeaders: {
        'mcp-param-card': '4111111111111111',
        'mcp-param-note': encodeHeaderValue('carte 4111 1111 1111 1111 é'),
        'mcp-param-other': 'x',
      },
    };
    let seen: { message: JsonRpcRequest; options: RequestOptions } | undefined;
    const log = recorder();
    await guardedRequest(set, call, log, message, options, async (m, o) => {
      seen = { message: m, options: o };
      return { jsonrpc: '2.0', id: m.id, result: { content: [] } };
    });
    assert.deepEqual(seen?.message.params?.arguments, {
      card: '[redacted:creditCard]',
      note: 'carte [redacted:creditCard] é',
      other: 'x',
    });
    assert.deepEqual(seen?.options.forwardHeaders, {
      'mcp-param-card': '[redacted:creditCard]',
      'mcp-param-note': encodeHeaderValue('carte [redacted:creditCard] é'),
      'mcp-param-other': 'x',
    });
    assert.deepEqual(log.decisions, ['cards-in redact arguments']);
  });

  test('blocked arguments never reach send', async () => {
    const set = rules({ name: 'no-keys', on: ['arguments'], detect: ['secrets'], action: 'block' });
    let sent = false;
    const answer = await guardedRequest(set, call, recorder(), toolCall({ key: AWS_KEY }), {}, async () => {
      sent = true;
      return { jsonrpc: '2.0', id: 7, result: {} };
    });
    assert.equal(sent, false);
    assert.ok('error' in answer);
    assert.match(answer.error.message, /^Refused by guardrail no-keys: the arguments held secrets/);
    assert.doesNotMatch(JSON.stringify(answer), /AKIA/);
  });

  test('a stream message that must be blocked is dropped, and the answer becomes the refusal', async () => {
    const set = rules({ name: 'no-keys', on: ['results'], detect: ['secrets'], action: 'block' });
    const written: JsonRpcNotification[] = [];
    const options: RequestOptions = { onNotification: (n) => written.push(n) };
    const progress = (message: string): JsonRpcNotification => ({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 1, progress: 1, message },
    });
    const answer = await guardedRequest(set, call, recorder(), toolCall({}), options, async (_m, o) => {
      o.onNotification?.(progress('step 1'));
      o.onNotification?.(progress(`key ${AWS_KEY}`));
      o.onNotification?.(progress('step 3'));
      return { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'done' }] } };
    });
    assert.deepEqual(
      written.map((n) => n.params?.message),
      ['step 1'],
    );
    assert.ok('error' in answer && /guardrail no-keys/.test(answer.error.message));
  });

  test('an answer from the cache is redacted in a copy, never in place', async () => {
    const set = rules({ name: 'cards', on: ['results'], detect: ['creditCard'], action: 'redact' });
    const cached: JsonRpcResponse = {
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: 'card 4111111111111111' }] },
    };
    const before = JSON.stringify(cached);
    const answer = await guardedRequest(set, call, recorder(), toolCall({}), {}, async () => cached);
    assert.equal(JSON.stringify(cached), before);
    assert.ok('result' in answer);
    assert.deepEqual(answer.result.content, [{ type: 'text', text: 'card [redacted:creditCard]' }]);
  });

  test("a task's result (tasks/get) is judged as the result of the tool that created it", async () => {
    const set = rules({
      name: 'cards',
      on: ['results'],
      tools: ['crm__lookup'],
      detect: ['creditCard'],
      action: 'redact',
    });
    const taskCall = { ...call, task: { ref: { server: 'crm' } }, taskTool: 'crm__lookup' };
    const get: JsonRpcRequest = { jsonrpc: '2.0', id: 8, method: 'tasks/get', params: { taskId: 'gwtask1.x' } };
    const answer = await guardedRequest(set, taskCall, recorder(), get, {}, async () => ({
      jsonrpc: '2.0',
      id: 8,
      result: {
        taskId: 'gwtask1.x',
        status: 'completed',
        result: { content: [{ type: 'text', text: '4111111111111111' }] },
      },
    }));
    assert.ok('result' in answer);
    assert.deepEqual(answer.result.result, { content: [{ type: 'text', text: '[redacted:creditCard]' }] });
  });

  test("tasks/update: the caller's input responses pass the arguments rules before the server sees them", async () => {
    const set = rules(
      { name: 'no-keys', on: ['arguments'], tools: ['crm__ask'], detect: ['secrets'], action: 'block' },
      { name: 'cards', on: ['arguments'], detect: ['creditCard'], action: 'redact' },
    );
    const taskCall = { ...call, task: { ref: { server: 'crm' } }, taskTool: 'crm__ask' };
    const update = (name: string): JsonRpcRequest => ({
      jsonrpc: '2.0',
      id: 9,
      method: 'tasks/update',
      params: { taskId: 'gwtask1.x', inputResponses: { 'name-1': { action: 'accept', content: { name } } } },
    });
    const sent: unknown[] = [];
    const send = async (m: JsonRpcRequest): Promise<JsonRpcResponse> => {
      sent.push(structuredClone(m.params?.inputResponses));
      return { jsonrpc: '2.0', id: m.id, result: { resultType: 'complete' } };
    };
    const log = recorder();
    const blocked = await guardedRequest(set, taskCall, log, update(`key ${AWS_KEY}`), {}, send);
    assert.ok('error' in blocked);
    assert.match(blocked.error.message, /^Refused by guardrail no-keys: the input responses held secrets/);
    assert.deepEqual(sent, [], 'a blocked answer never reaches the server');
    await guardedRequest(set, taskCall, log, update('card 4111 1111 1111 1111'), {}, send);
    assert.deepEqual(sent, [{ 'name-1': { action: 'accept', content: { name: 'card [redacted:creditCard]' } } }]);
    // Chosen by the tool that created the task: another tool's task meets only the rule without globs.
    const other = { ...taskCall, taskTool: 'crm__other' };
    assert.ok('result' in (await guardedRequest(set, other, log, update(`key ${AWS_KEY}`), {}, send)));
    assert.deepEqual(log.decisions, ['no-keys block arguments', 'cards redact arguments']);
  });

  test("an input_required retry's inputResponses pass the arguments rules too", async () => {
    const set = rules({ name: 'cards', on: ['arguments'], detect: ['creditCard'], action: 'redact' });
    const retry = toolCall({ q: 'pay' });
    retry.params!.requestState = 'state-1';
    retry.params!.inputResponses = { card: { action: 'accept', content: { number: '5555555555554444' } } };
    let seen: unknown;
    await guardedRequest(set, call, recorder(), retry, {}, async (m) => {
      seen = m.params?.inputResponses;
      return { jsonrpc: '2.0', id: m.id, result: { content: [] } };
    });
    assert.deepEqual(seen, { card: { action: 'accept', content: { number: '[redacted:creditCard]' } } });
  });

  test("a server's error echoing a key is judged as its answer is", async () => {
    const redact = rules({ name: 'keys', on: ['results'], detect: ['secrets'], action: 'redact' });
    const failing = async (): Promise<JsonRpcResponse> => ({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32000, message: `invalid key ${AWS_KEY}`, data: { key: AWS_KEY } },
    });
    const redacted = await guardedRequest(redact, call, recorder(), toolCall({}), {}, failing);
    assert.deepEqual(redacted, {
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32000, message: 'invalid key [redacted:secrets]', data: { key: '[redacted:secrets]' } },
    });
    const block = rules({ name: 'keys', on: ['results'], detect: ['secrets'], action: 'block' });
    const blocked = await guardedRequest(block, call, recorder(), toolCall({}), {}, failing);
    assert.ok('error' in blocked && /^Refused by guardrail keys/.test(blocked.error.message));
  });
});

describe("a task's status on a listen stream", () => {
  const status = (text: string) => ({
    taskId: 'gwtask1.x',
    status: 'completed',
    statusMessage: `done: ${text}`,
    createdAt: '2026-12-07T10:00:00Z',
    lastUpdatedAt: '2026-12-07T10:00:01Z',
    ttlMs: 60_000,
    pollIntervalMs: 50,
    result: { content: [{ type: 'text', text }] },
    _meta: { 'io.modelcontextprotocol/subscriptionId': 3 },
  });

  test('redacted by the results rules of the tool that created the task; passed as given when none finds', async () => {
    const set = rules({
      name: 'cards',
      on: ['results'],
      tools: ['crm__lookup'],
      detect: ['creditCard'],
      action: 'redact',
    });
    const log = recorder();
    const given = status('4111111111111111');
    const shown = await judgedTaskStatus(set, call, log, 'crm', 'crm__lookup', given);
    assert.deepEqual(shown.result, { content: [{ type: 'text', text: '[redacted:creditCard]' }] });
    assert.equal(shown.statusMessage, 'done: [redacted:creditCard]');
    assert.equal(given.result.content[0]!.text, '4111111111111111', 'the status given is never changed');
    assert.equal(await judgedTaskStatus(set, call, log, 'crm', 'crm__other', given), given);
    assert.deepEqual(log.decisions, ['cards redact results']);
  });

  test("blocked: shown failed with the refusal, keeping the task's own fields and none of its content", async () => {
    const set = rules({ name: 'no-keys', on: ['results'], detect: ['secrets'], action: 'block' });
    const shown = await judgedTaskStatus(set, call, recorder(), 'crm', 'crm__lookup', status(`key ${AWS_KEY}`));
    assert.deepEqual(shown, {
      status: 'failed',
      error: {
        code: -32602,
        message:
          'Refused by guardrail no-keys: the result held secrets; ask an operator if this is wrong ' +
          '(guardrails[].name no-keys)',
        data: { guardrail: 'no-keys', stage: 'results', detectors: ['secrets'] },
      },
      taskId: 'gwtask1.x',
      createdAt: '2026-12-07T10:00:00Z',
      lastUpdatedAt: '2026-12-07T10:00:01Z',
      ttlMs: 60_000,
      pollIntervalMs: 50,
      _meta: { 'io.modelcontextprotocol/subscriptionId': 3 },
    });
  });
});
