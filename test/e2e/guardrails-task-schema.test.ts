// A redacted task result is checked against the outputSchema of the tool that created the task, as a tools/call's
// result is (issue 48): test/fixtures/tasks-server.mjs's `charge` completes with a payment record whose card
// must be digits and spaces. A redaction that pattern refuses makes tasks/get a refusal naming the rule and the
// schema, and a listen shows the task failed with that refusal; a card number held in a JSON number is refused
// rather than changed; a redaction the schema allows passes, polled and pushed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { tempDir } from '../temp.js';
import { eventually, headersFor, openListen, post, request, ROOT, until } from './harness.js';
import { startReadyGateway } from './ready-gateway.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const META = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };
const CARD = '4111 1111 1111 1111';

const tmp = tempDir('mcp-gw-guardrails-task-schema-');
after(() => rmSync(tmp, { recursive: true, force: true }));

describe("a redacted task result and its tool's outputSchema", () => {
  let gateway: RunningGateway;

  const send = (url: string, method: string, params: Record<string, unknown>) => {
    const body = request(method, { ...params, _meta: META });
    const headers: Record<string, string> = { ...headersFor(body) };
    if (method.startsWith('tasks/')) headers['mcp-name'] = String(params.taskId);
    return post(url, body, headers);
  };
  const create = async (url: string, name: string, args: Record<string, unknown>): Promise<string> => {
    const created = await send(url, 'tools/call', { name, arguments: args });
    assert.equal(created.body.result?.resultType, 'task', JSON.stringify(created.body));
    return created.body.result.taskId;
  };
  /** tasks/get until the task is done (completed, or refused): its last answer. */
  const settled = async (url: string, taskId: string): Promise<any> => {
    let last: any;
    const reached = await until(async () => {
      last = (await send(url, 'tasks/get', { taskId })).body;
      return last.error !== undefined || last.result?.status === 'completed';
    }, 5_000);
    assert.ok(reached, JSON.stringify(last));
    return last;
  };
  /** Follows one task on a listen stream until it shows a final status; that status's params. */
  const pushed = async (url: string, taskId: string): Promise<any> => {
    const { messages, close } = await openListen(url, { taskIds: [taskId] }, {}, META);
    try {
      const final = () =>
        messages.find((m) => m.method === 'notifications/tasks' && ['completed', 'failed'].includes(m.params?.status));
      await eventually(() => final() !== undefined, 5_000);
      return final().params;
    } finally {
      close();
    }
  };

  before(async () => {
    gateway = await startReadyGateway(
      {
        t: {
          command: process.execPath,
          args: ['test/fixtures/tasks-server.mjs'],
          cwd: ROOT,
          env: { SERVER_ID: 't' },
        },
      },
      {},
      {
        auth: { anonymous: true },
        audit: { destination: path.join(tmp, 'audit.jsonl') },
        guardrails: [
          { name: 'cards-out', on: ['results'], tools: ['t__charge'], detect: ['creditCard'], action: 'redact' },
        ],
      },
    );
    // The gateway checks a result against the tool's definition as /mcp's list gave it: read it once.
    const listed = await post(`${gateway.url}/mcp`, request('tools/list'));
    assert.ok(
      listed.body.result?.tools?.some((tool: any) => tool.name === 't__charge' && tool.outputSchema),
      JSON.stringify(listed.body),
    );
  });
  after(() => gateway?.close());

  test("a redaction the schema's pattern refuses: tasks/get is refused, the listen shows the task failed", async () => {
    for (const [url, tool] of [
      [`${gateway.url}/mcp`, 't__charge'],
      [`${gateway.url}/servers/t/mcp`, 'charge'],
    ] as const) {
      const taskId = await create(url, tool, { card: CARD, ms: 300 });
      const status = await pushed(url, taskId);
      assert.equal(status.status, 'failed', `${url}: ${JSON.stringify(status)}`);
      assert.equal(status.taskId, taskId);
      assert.equal(status.error.code, -32602);
      assert.match(status.error.message, /^Refused by guardrail cards-out: the result held creditCard .*outputSchema/);
      assert.deepEqual(status.error.data, { guardrail: 'cards-out', stage: 'results', detectors: ['creditCard'] });
      assert.equal(status.result, undefined);
      const polled = await settled(url, taskId);
      assert.equal(polled.error?.code, -32602, JSON.stringify(polled));
      assert.match(polled.error.message, /^Refused by guardrail cards-out: .*outputSchema/);
      assert.doesNotMatch(JSON.stringify([status, polled]), /4111/);
    }
  });

  test('a card number held in a JSON number is refused rather than changed', async () => {
    const url = `${gateway.url}/mcp`;
    const taskId = await create(url, 't__charge', { card: '0000', amount: 4111111111111111, ms: 50 });
    const polled = await settled(url, taskId);
    assert.equal(polled.error?.code, -32602, JSON.stringify(polled));
    assert.match(polled.error.message, /^Refused by guardrail cards-out: .*a number matched/);
    const status = await pushed(url, taskId);
    assert.equal(status.status, 'failed', JSON.stringify(status));
    assert.match(status.error.message, /a number matched/);
    assert.doesNotMatch(JSON.stringify([status, polled]), /4111/);
  });

  test('a redaction the schema allows passes, polled and pushed', async () => {
    const url = `${gateway.url}/mcp`;
    const taskId = await create(url, 't__charge', { customer: `Jane Roe, paid with ${CARD}`, card: '0000', ms: 50 });
    const expected = { customer: 'Jane Roe, paid with [redacted:creditCard]', card: '0000', amount: 100 };
    const polled = await settled(url, taskId);
    assert.deepEqual(polled.result?.result?.structuredContent, expected, JSON.stringify(polled));
    const status = await pushed(url, taskId);
    assert.equal(status.status, 'completed', JSON.stringify(status));
    assert.deepEqual(status.result.structuredContent, expected);
  });
});
