// A guardrail's webhook detector (src/guardrails/webhook.ts) against a local node:http server standing in for a
// company's DLP: allow, redact spans counted in code points (multi-byte text and an astral emoji included),
// block, a timeout with failOpen false and true, malformed answers, an unreachable webhook; what it is sent
// (context, its own headers, nothing of the gateway's); arguments redacted with their Mcp-Param-* copies; and
// the load errors: plain http beyond this machine, credentials in the URL.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { RequestOptions } from '../../bridge/upstream.js';
import { encodeHeaderValue } from '../../bridge/http/mcp-headers.js';
import { GuardrailError, GuardrailSet } from '../../policy/guardrails/rule-set.js';
import type { GuardrailSetting, WebhookDetectorSetting } from '../../policy/guardrails/settings.js';
import { PLAIN_TARGET } from '../../policy/target.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { type GuardrailRecorder, guardedRequest } from '../../src/guardrails/guarded-call.js';
import { configProblems } from '../config-problems.js';

const known = { servers: new Set(['crm']), endpoints: new Set(['/mcp', '/servers/crm/mcp']) };
const call = {
  principal: { id: 'alice', groups: [], scopes: [], via: 'api-key' as const },
  path: '/servers/crm/mcp',
  target: PLAIN_TARGET,
  server: 'crm',
};

interface Seen {
  body: any;
  headers: IncomingMessage['headers'];
}
type Handler = (body: any, res: ServerResponse) => void;

describe('a guardrail webhook', () => {
  let url = '';
  let handler: Handler = (_body, res) => res.end('{"action":"allow"}');
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text);
      seen.push({ body, headers: req.headers });
      handler(body, res);
    });
  });
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/judge`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const hook = (extra: Partial<WebhookDetectorSetting> = {}): WebhookDetectorSetting => ({
    webhook: url,
    name: 'dlp',
    // Generous: only the timeout tests (which never answer) wait for it.
    timeoutMs: 30_000,
    headers: { authorization: 'Bearer dlp-token' },
    ...extra,
  });
  const rule = (extra: Partial<GuardrailSetting> & { hook?: Partial<WebhookDetectorSetting> } = {}) => {
    const { hook: hookExtra, ...rest } = extra;
    return GuardrailSet.compile(
      [{ name: 'company-dlp', on: ['arguments', 'results'], detect: [hook(hookExtra)], action: 'redact', ...rest }],
      known,
    );
  };
  const recorder = () => {
    const decisions: string[] = [];
    const webhooks: string[] = [];
    const log: GuardrailRecorder & { decisions: string[]; webhooks: string[] } = {
      audit: undefined,
      decisions,
      webhooks,
      decision: (r, action, stage) => decisions.push(`${r} ${action} ${stage}`),
      webhook: (r, name, outcome) => webhooks.push(`${r} ${name} ${outcome}`),
    };
    return log;
  };
  const toolCall = (args: Record<string, unknown> = {}): JsonRpcRequest => ({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'lookup', arguments: args },
  });
  const answering =
    (result: Record<string, unknown>) =>
    async (m: JsonRpcRequest): Promise<JsonRpcResponse> => ({ jsonrpc: '2.0', id: m.id, result });
  const record = { customer: 'Jürgen Groß 🎉', note: 'badge 🎉 ZX-99 at Straße 5' };
  const result = { content: [{ type: 'text', text: record.note }], structuredContent: record };

  test(
    'allow: the answer passes as it was, ' + 'and the webhook was told the context and given its own headers',
    async () => {
      seen.length = 0;
      handler = (_body, res) => res.end('{"action":"allow"}');
      const log = recorder();
      const answer = await guardedRequest(rule({ on: ['results'] }), call, log, toolCall(), {}, answering(result));
      assert.deepEqual((answer as any).result, result);
      assert.equal(seen.length, 1);
      const { body, headers } = seen[0]!;
      assert.equal(headers.authorization, 'Bearer dlp-token');
      assert.equal(headers['content-type'], 'application/json');
      assert.equal(body.version, 1);
      assert.equal(body.rule, 'company-dlp');
      assert.equal(body.stage, 'results');
      assert.equal(body.server, 'crm');
      assert.equal(body.principal, 'alice');
      assert.equal(body.endpoint, '/servers/crm/mcp');
      assert.equal(body.method, 'tools/call');
      assert.deepEqual(body.content, result);
      // Distinct strings, protocol keys (type) skipped: the text content and the note are the same string.
      assert.deepEqual(body.texts, [record.note, record.customer]);
      assert.deepEqual(log.decisions, []);
      assert.deepEqual(log.webhooks, ['company-dlp dlp allow']);
    },
  );

  test('redact: spans in code points, multi-byte and astral text included, in every copy of the string', async () => {
    handler = (body, res) => {
      const index = body.texts.indexOf(record.note);
      const start = [...record.note].indexOf('Z');
      res.end(JSON.stringify({ action: 'redact', spans: [{ text: index, start, end: start + 5 }] }));
    };
    const log = recorder();
    const answer: any = await guardedRequest(rule({ on: ['results'] }), call, log, toolCall(), {}, answering(result));
    assert.equal(answer.result.structuredContent.note, 'badge 🎉 [redacted:dlp] at Straße 5');
    assert.equal(answer.result.content[0].text, 'badge 🎉 [redacted:dlp] at Straße 5');
    assert.equal(answer.result.structuredContent.customer, record.customer);
    assert.equal(result.structuredContent.note, record.note, 'the server answer itself is never changed');
    assert.deepEqual(log.decisions, ['company-dlp redact results']);
    assert.deepEqual(log.webhooks, ['company-dlp dlp redact']);
  });

  test('block: the answer is refused naming the rule, never the content', async () => {
    handler = (_body, res) => res.end('{"action":"block"}');
    const log = recorder();
    const answer: any = await guardedRequest(rule({ on: ['results'] }), call, log, toolCall(), {}, answering(result));
    assert.equal(answer.error.code, -32602);
    assert.match(answer.error.message, /Refused by guardrail company-dlp: the result held dlp/);
    assert.doesNotMatch(JSON.stringify(answer), /ZX-99/);
    assert.deepEqual(answer.error.data, { guardrail: 'company-dlp', stage: 'results', detectors: ['dlp'] });
    assert.deepEqual(log.decisions, ['company-dlp block results']);
  });

  test(
    'beside built-in detectors and after another rule: ' + 'it sees what that rule left, both spans redacted',
    async () => {
      seen.length = 0;
      handler = (body, res) => {
        const index = body.texts.findIndex((t: string) => t.includes('ZX-99'));
        const text: string = body.texts[index];
        const start = [...text.slice(0, text.indexOf('ZX-99'))].length; // in code points
        res.end(JSON.stringify({ action: 'redact', spans: [{ text: index, start, end: start + 5 }] }));
      };
      const set = GuardrailSet.compile(
        [
          { name: 'cards', on: ['results'], detect: ['creditCard'], action: 'redact' },
          { name: 'company-dlp', on: ['results'], detect: ['email', hook()], action: 'redact' },
        ],
        known,
      );
      const note = 'card 4111 1111 1111 1111, mail juergen@example.com, badge ZX-99';
      const log = recorder();
      const answer: any = await guardedRequest(
        set,
        call,
        log,
        toolCall(),
        {},
        answering({ content: [{ type: 'text', text: note }] }),
      );
      assert.equal(
        answer.result.content[0].text,
        'card [redacted:creditCard], mail [redacted:email], badge [redacted:dlp]',
      );
      assert.deepEqual(seen.at(-1)?.body.texts, ['card [redacted:creditCard], mail juergen@example.com, badge ZX-99']);
      assert.deepEqual(log.decisions, ['cards redact results', 'company-dlp redact results']);
    },
  );

  test('block under action log only records it (a trial run)', async () => {
    handler = (_body, res) => res.end('{"action":"block"}');
    const log = recorder();
    const set = rule({ on: ['results'], action: 'log' });
    const answer: any = await guardedRequest(set, call, log, toolCall(), {}, answering(result));
    assert.deepEqual(answer.result, result);
    assert.deepEqual(log.decisions, ['company-dlp log results']);
  });

  test('a timeout with failOpen false refuses, naming the rule and failOpen', async () => {
    handler = () => {}; // never answers; after() closes the connection
    const log = recorder();
    const set = rule({ on: ['results'], hook: { timeoutMs: 150 } });
    const answer: any = await guardedRequest(set, call, log, toolCall(), {}, answering(result));
    assert.equal(answer.error.code, -32602);
    assert.match(answer.error.message, /guardrail company-dlp: its webhook dlp gave no answer within 150 ms/);
    assert.match(answer.error.message, /failOpen is false/);
    assert.deepEqual(log.decisions, ['company-dlp block results']);
    assert.deepEqual(log.webhooks, ['company-dlp dlp timeout']);
  });

  test('a timeout with failOpen true passes the answer, with an audit record', async () => {
    handler = () => {};
    const log = recorder();
    const lines: any[] = [];
    const audit = { record: (line: unknown) => lines.push(line) } as unknown as GuardrailRecorder['audit'];
    const set = rule({ on: ['results'], hook: { timeoutMs: 150, failOpen: true } });
    const answer: any = await guardedRequest(set, call, { ...log, audit }, toolCall(), {}, answering(result));
    assert.deepEqual(answer.result, result);
    assert.deepEqual(log.decisions, ['company-dlp log results']);
    assert.deepEqual(log.webhooks, ['company-dlp dlp timeout']);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].rule, 'guardrail company-dlp');
    assert.match(lines[0].guardrail.webhookFailure, /gave no answer within 150 ms; failOpen passed it/);
  });

  for (const [what, body] of [
    ['not JSON', 'allow'],
    ['an unknown action', '{"action":"maybe"}'],
    ['a span beyond its text', '{"action":"redact","spans":[{"text":0,"start":0,"end":9999}]}'],
    ['a span naming no text', '{"action":"redact","spans":[{"text":42,"start":0,"end":1}]}'],
    ['a span with start after end', '{"action":"redact","spans":[{"text":0,"start":3,"end":1}]}'],
  ] as const) {
    test(`a malformed answer (${what}) follows failOpen false: refused`, async () => {
      handler = (_body, res) => res.end(body);
      const log = recorder();
      const answer: any = await guardedRequest(rule({ on: ['results'] }), call, log, toolCall(), {}, answering(result));
      assert.match(answer.error?.message ?? '', /guardrail company-dlp: its webhook dlp answered/);
      assert.deepEqual(log.webhooks, ['company-dlp dlp malformed']);
    });
  }

  test('an answer longer than 16 MiB is malformed, and the rest is not read', async () => {
    handler = (_body, res) => {
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      const write = (left: number): void => {
        if (left === 0 || res.destroyed) return void res.end();
        res.write(chunk, () => write(left - 1));
      };
      write(20);
    };
    const log = recorder();
    const answer: any = await guardedRequest(rule({ on: ['results'] }), call, log, toolCall(), {}, answering(result));
    assert.match(answer.error?.message ?? '', /its webhook dlp answered with more than 16777216 bytes/);
    assert.deepEqual(log.webhooks, ['company-dlp dlp malformed']);
  });

  test('an HTTP error and an unreachable webhook follow failOpen', async () => {
    handler = (_body, res) => {
      res.statusCode = 503;
      res.end('busy');
    };
    const refused: any = await guardedRequest(
      rule({ on: ['results'] }),
      call,
      recorder(),
      toolCall(),
      {},
      answering(result),
    );
    assert.match(refused.error.message, /its webhook dlp answered HTTP 503/);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/`;
    await new Promise((resolve) => closed.close(resolve));
    const log = recorder();
    const set = rule({ on: ['results'], hook: { webhook: deadUrl, failOpen: true } });
    const passed: any = await guardedRequest(set, call, log, toolCall(), {}, answering(result));
    assert.deepEqual(passed.result, result);
    assert.deepEqual(log.webhooks, ['company-dlp dlp unreachable']);
  });

  test('arguments: redacted before the server sees them, in their Mcp-Param-* copies too', async () => {
    handler = (body, res) => {
      if (body.stage !== 'arguments') return res.end('{"action":"allow"}');
      const index = body.texts.indexOf('Grüße, id ZX-99');
      res.end(JSON.stringify({ action: 'redact', spans: [{ text: index, start: 10, end: 15 }] }));
    };
    const message = toolCall({ note: 'Grüße, id ZX-99', other: 'x' });
    const options: RequestOptions = {
      forwardHeaders: { 'mcp-param-note': encodeHeaderValue('Grüße, id ZX-99'), 'mcp-param-other': 'x' },
    };
    let sent: { args: unknown; headers: unknown } | undefined;
    await guardedRequest(rule(), call, recorder(), message, options, async (m, o) => {
      sent = { args: structuredClone(m.params?.arguments), headers: o.forwardHeaders };
      return { jsonrpc: '2.0', id: m.id, result: { content: [] } };
    });
    assert.deepEqual(sent?.args, { note: 'Grüße, id [redacted:dlp]', other: 'x' });
    assert.deepEqual(sent?.headers, {
      'mcp-param-note': encodeHeaderValue('Grüße, id [redacted:dlp]'),
      'mcp-param-other': 'x',
    });
  });

  test('arguments blocked never reach the server, and the arguments kept for the audit line are emptied', async () => {
    handler = (_body, res) => res.end('{"action":"block"}');
    const message = toolCall({ note: 'secret' });
    let reached = false;
    const answer: any = await guardedRequest(rule(), call, recorder(), message, {}, async (m) => {
      reached = true;
      return { jsonrpc: '2.0', id: m.id, result: {} };
    });
    assert.equal(reached, false);
    assert.match(answer.error.message, /guardrail company-dlp: the arguments held dlp/);
    assert.deepEqual(message.params?.arguments, {});
  });
});

describe('a guardrail webhook at load', () => {
  const compile = (webhook: string) =>
    GuardrailSet.compile([{ name: 'dlp', on: ['results'], detect: [{ webhook }], action: 'block' }], known);
  const problems = (webhook: string): string[] => {
    try {
      compile(webhook);
      return [];
    } catch (error) {
      assert.ok(error instanceof GuardrailError);
      return error.problems;
    }
  };

  test('plain http beyond this machine is refused, naming the key', () => {
    for (const webhook of ['http://dlp.example.com/judge', 'http://127.attacker.example/', 'http://10.0.0.5/']) {
      const [problem] = problems(webhook);
      assert.match(problem ?? '', /^guardrails\[0\] \(dlp\)\.detect\[0\]\.webhook: .* is not https/, webhook);
    }
  });

  test('https anywhere, and http on loopback, are accepted', () => {
    for (const webhook of [
      'https://dlp.example.com/judge',
      'http://127.0.0.1:9/x',
      'http://localhost/',
      'http://[::1]/',
    ])
      assert.deepEqual(problems(webhook), [], webhook);
    const [spec] = compile('https://dlp.example.com/judge').rules[0]!.webhooks;
    assert.deepEqual(
      { timeoutMs: spec?.timeoutMs, failOpen: spec?.failOpen, name: spec?.name },
      { timeoutMs: 2000, failOpen: false, name: 'webhook' },
    );
  });

  test("a built-in detector's name, and a header name that is no header name, are refused", () => {
    const named = () =>
      GuardrailSet.compile(
        [{ name: 'dlp', on: ['results'], detect: [{ webhook: 'https://x.example/', name: 'email' }], action: 'log' }],
        known,
      );
    assert.throws(named, /guardrails\[0\] \(dlp\)\.detect\[0\]\.name: "email" is a built-in detector; pick another/);
    const problems = configProblems({
      servers: { crm: { command: 'node' } },
      guardrails: [
        {
          name: 'dlp',
          on: ['results'],
          detect: [{ webhook: 'https://x.example/', headers: { 'a b': 'x' } }],
          action: 'log',
        },
      ],
    });
    assert.ok(
      problems.some((p) => p.startsWith('guardrails[0] (dlp).detect[0].headers: "a b" is not a header name')),
      `${problems}`,
    );
  });

  test('credentials in the URL, and something that is no URL, are refused', () => {
    assert.match(problems('https://user:pw@dlp.example.com/')[0] ?? '', /detect\[0\]\.webhook: put credentials in/);
    assert.match(problems('dlp.example.com')[0] ?? '', /detect\[0\]\.webhook: "dlp.example.com" is not a URL/);
  });
});
