// Guardrails through a profile, search mode and 2025 clients (issue 48), with the built-in detectors beside a
// webhook detector (a local stand-in for a company's DLP), on realistic payloads from
// test/fixtures/content-server.mjs: a CRM record (a card number and an IBAN for the built-ins, the customer's
// name for the webhook), a GitHub issue whose body plants an instruction for the model, and a `.env` file read
// by a tool; each in a JSON answer and an SSE one (a 2025 client's tools/call is always a stream).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { tempDir } from '../temp.js';
import { headersFor, post, request, ROOT, textOf } from './harness.js';
import { exchange, initialize, legacy, legacyHeaders, type Session } from './legacy-clients-kit.js';
import { startReadyGateway } from './ready-gateway.js';

const tmp = tempDir('mcp-gw-guardrails-views-');
after(() => rmSync(tmp, { recursive: true, force: true }));

/** The stand-in DLP: redacts the customer's name wherever it is asked about it. */
function judge(body: { texts: string[] }): unknown {
  const spans = [];
  for (const [i, text] of body.texts.entries()) {
    const at = text.indexOf('Jane Roe');
    if (at >= 0) spans.push({ text: i, start: [...text.slice(0, at)].length, end: [...text.slice(0, at)].length + 8 });
  }
  return spans.length ? { action: 'redact', spans } : { action: 'allow' };
}

type Payload = 'crm' | 'issue' | 'env';

/** What each payload must come to, whatever the way in: asserted on the final JSON-RPC message. */
function assertJudged(payload: Payload, answer: any, where: string): void {
  const said = `${where}: ${JSON.stringify(answer)}`;
  if (payload === 'issue') {
    assert.equal(answer?.error?.code, -32602, said);
    assert.match(answer.error.message, /^Refused by guardrail injection: the result held promptInjection/, said);
    assert.doesNotMatch(JSON.stringify(answer), /ssh|previous instructions/i, said);
    return;
  }
  const result = answer?.result;
  assert.ok(result, said);
  if (payload === 'crm') {
    assert.deepEqual(
      result.structuredContent,
      {
        customer: '[redacted:dlp]',
        orderId: 'ORD-20261207-000123',
        card: '[redacted:creditCard]',
        iban: '[redacted:iban]',
      },
      said,
    );
    assert.doesNotMatch(textOf(result), /Jane Roe|4111|GB82/, said);
    return;
  }
  assert.equal(
    textOf(result),
    [
      'NODE_ENV=production',
      'DATABASE_URL=postgres://app@db.internal:5432/app',
      'GITHUB_TOKEN=[redacted:secrets]',
      'AWS_ACCESS_KEY_ID=[redacted:secrets]',
      '[redacted:secrets]',
      '',
    ].join('\n'),
    said,
  );
}

describe('guardrails through a profile, search mode and 2025 clients', () => {
  let gateway: RunningGateway;
  const asked: any[] = [];
  const dlp = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text);
      asked.push(body);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(judge(body)));
    });
  });

  before(async () => {
    await new Promise<void>((resolve) => dlp.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(dlp.address() as AddressInfo).port}/judge`;
    gateway = await startReadyGateway(
      { crm: { command: process.execPath, args: ['test/fixtures/content-server.mjs'], cwd: ROOT, era: 'modern' } },
      {},
      {
        auth: { anonymous: true },
        audit: { destination: path.join(tmp, 'audit.jsonl') },
        profiles: { support: { tools: ['crm__*'], rename: { crm__crm_record: 'customer_record' } } },
        guardrails: [
          {
            name: 'crm-out',
            on: ['results'],
            servers: ['crm'],
            tools: ['crm__crm_record'],
            detect: ['creditCard', 'iban', { webhook: hook, name: 'dlp', timeoutMs: 30_000 }],
            action: 'redact',
          },
          { name: 'injection', on: ['results'], detect: ['promptInjection'], action: 'block' },
          { name: 'secrets-out', on: ['results'], detect: ['secrets'], action: 'redact' },
        ],
      },
    );
  });
  after(async () => {
    await gateway?.close();
    dlp.closeAllConnections();
    await new Promise((resolve) => dlp.close(resolve));
  });

  const TOOLS: Record<Payload, string> = { crm: 'crm__crm_record', issue: 'crm__issue_injected', env: 'crm__read_env' };
  /** The request a client sends on each endpoint for a payload's tool. */
  const params = (endpoint: string, payload: Payload, meta?: Record<string, unknown>) => {
    const name =
      endpoint === '/profiles/support/mcp' && payload === 'crm' ? 'customer_record' : (TOOLS[payload] as string);
    const call = { name, arguments: {} };
    const params = endpoint === '/search/mcp' ? { name: 'call_tool', arguments: call } : call;
    return meta === undefined ? params : { ...params, _meta: meta };
  };

  for (const endpoint of ['/profiles/support/mcp', '/search/mcp']) {
    for (const sse of [false, true]) {
      test(`${endpoint}, ${sse ? 'SSE' : 'JSON'}: a CRM record, an injected issue, a .env file`, async () => {
        asked.length = 0;
        for (const payload of ['crm', 'issue', 'env'] as const) {
          const body = request('tools/call', params(endpoint, payload, sse ? { progressToken: 'p' } : undefined));
          const answer = await post(`${gateway.url}${endpoint}`, body, headersFor(body));
          const type = answer.headers.get('content-type') ?? '';
          assert.equal(type.startsWith('text/event-stream'), sse, `${endpoint} ${payload}: ${type}`);
          assertJudged(payload, answer.body, `${endpoint} ${payload}`);
        }
        // The webhook was asked about the CRM record only, under its /mcp name, with the endpoint it came in on.
        assert.deepEqual(
          asked.map((body) => [body.rule, body.endpoint, body.name, body.stage]),
          [['crm-out', endpoint, 'crm__crm_record', 'results']],
        );
      });
    }
  }

  for (const endpoint of ['/profiles/support/mcp', '/search/mcp']) {
    test(`a 2025 client on ${endpoint}: the same, on its POST's stream`, async () => {
      const { session } = await initialize(`${gateway.url}${endpoint}`);
      for (const payload of ['crm', 'issue', 'env'] as const) {
        const answer = await exchange(
          session.url,
          'POST',
          legacyHeaders(session as Session),
          legacy('tools/call', params(endpoint, payload)),
        );
        assert.equal(answer.headers.get('content-type')?.startsWith('text/event-stream'), true, answer.text);
        assertJudged(payload, answer.body, `2025 ${endpoint} ${payload}`);
        assert.equal(answer.body.result?.resultType, undefined, 'a 2025 result');
      }
    });
  }
});
