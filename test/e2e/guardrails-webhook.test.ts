// A guardrail's webhook through a running gateway (/mcp), with a local node:http server standing in for a
// company's DLP: a tool result redacted by the spans it names (text and structuredContent), arguments redacted
// before the server sees them and blocked so they never reach it, the webhook's own header (from ${VAR}) sent
// and the caller's credentials never, outcomes counted; and the config refusing plain http beyond loopback.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { configProblems } from '../config-problems.js';
import { tempDir } from '../temp.js';
import { headersFor, post, ROOT, request, textOf } from './harness.js';
import { startReadyGateway } from './ready-gateway.js';

const tmp = tempDir('mcp-gw-guardrails-webhook-');
after(() => rmSync(tmp, { recursive: true, force: true }));

const KEY = 'alice-key-0123456789';
const OPS = 'ops-key-0123456789-ops';

/** The stand-in DLP: redacts the customer's name "Jane Roe" and the id "ZX-99", blocks "confidential". */
function judge(body: any): unknown {
  if (body.texts.some((t: string) => t.includes('confidential'))) return { action: 'block' };
  const spans = [];
  for (const [i, text] of (body.texts as string[]).entries()) {
    const points = [...text];
    for (const word of ['Jane Roe', 'ZX-99', '5555 5555 5555 4444']) {
      const at = points.join('').indexOf(word);
      if (at >= 0) {
        const start = [...text.slice(0, at)].length;
        spans.push({ text: i, start, end: start + [...word].length });
      }
    }
  }
  return spans.length ? { action: 'redact', spans } : { action: 'allow' };
}

describe('a guardrail webhook through /mcp', () => {
  let gateway: RunningGateway;
  let hookUrl = '';
  const calls: { body: any; headers: IncomingMessage['headers'] }[] = [];
  const record = path.join(tmp, 'crm.jsonl');
  const dlp = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text);
      calls.push({ body, headers: req.headers });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(judge(body)));
    });
  });
  const callTool = (name: string, args: Record<string, unknown> = {}) => {
    const body = request('tools/call', { name, arguments: args });
    return post(`${gateway.url}/mcp`, body, { ...headersFor(body), authorization: `Bearer ${KEY}` });
  };

  before(async () => {
    await new Promise<void>((resolve) => dlp.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(dlp.address() as AddressInfo).port}/judge`;
    process.env.GW_TEST_DLP_TOKEN = 'dlp-secret-123';
    const servers = {
      crm: {
        command: process.execPath,
        args: ['test/fixtures/content-server.mjs'],
        cwd: ROOT,
        era: 'modern',
        env: { RECORD_FILE: record },
      },
    };
    gateway = await startReadyGateway(
      servers,
      {},
      {
        auth: {
          apiKeys: [
            { key: KEY, principal: 'alice' },
            { key: OPS, principal: 'ops' },
          ],
          operators: { ids: ['ops'] },
        },
        audit: { destination: path.join(tmp, 'audit.jsonl') },
        guardrails: [
          {
            name: 'company-dlp',
            on: ['arguments', 'results'],
            detect: [
              {
                webhook: hookUrl,
                name: 'dlp',
                timeoutMs: 30_000,
                headers: { authorization: 'Bearer ${GW_TEST_DLP_TOKEN}' },
              },
            ],
            action: 'redact',
          },
        ],
      },
    );
  });
  after(async () => {
    delete process.env.GW_TEST_DLP_TOKEN;
    await gateway?.close();
    dlp.closeAllConnections();
    await new Promise((resolve) => dlp.close(resolve));
  });

  test('a tool result: the spans the webhook names are redacted in text and structuredContent', async () => {
    calls.length = 0;
    const answer = await callTool('crm__crm_record');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.result.structuredContent.customer, '[redacted:dlp]');
    assert.equal(answer.body.result.structuredContent.orderId, 'ORD-20261207-000123');
    assert.doesNotMatch(textOf(answer), /Jane Roe/);
    assert.match(textOf(answer), /\[redacted:dlp\]/);
    const asked = calls.find((c) => c.body.stage === 'results');
    assert.equal(asked?.body.name, 'crm__crm_record');
    assert.equal(asked?.body.server, 'crm');
    assert.equal(asked?.body.principal, 'alice');
    assert.equal(asked?.headers.authorization, 'Bearer dlp-secret-123', "the webhook's own header, from ${VAR}");
    assert.doesNotMatch(JSON.stringify(calls.map((c) => c.headers)), new RegExp(KEY), 'never the caller key');
  });

  test('SSE: a progress message is judged by the webhook before it is written', async () => {
    const body = request('tools/call', { name: 'crm__progress_card', arguments: {}, _meta: { progressToken: 'p1' } });
    const answer = await post(`${gateway.url}/mcp`, body, { ...headersFor(body), authorization: `Bearer ${KEY}` });
    assert.equal(answer.headers.get('content-type')?.startsWith('text/event-stream'), true);
    const progress = answer.events.find((event) => event.method === 'notifications/progress');
    assert.equal(progress?.params.message, 'charging [redacted:dlp]');
    assert.equal(textOf(answer.body), 'charged');
  });

  test('arguments: redacted before the server sees them, and blocked ones never reach it', async () => {
    const redacted = await callTool('crm__echo', { note: 'für ZX-99 🎉' });
    assert.equal(textOf(redacted), '{"note":"für [redacted:dlp] 🎉"}');
    const blocked = await callTool('crm__echo', { note: 'a confidential memo' });
    assert.match(blocked.body.error?.message ?? '', /Refused by guardrail company-dlp: the arguments held dlp/);
    const seen = existsSync(record) ? readFileSync(record, 'utf8') : '';
    assert.match(seen, /\[redacted:dlp\]/);
    assert.doesNotMatch(seen, /ZX-99|confidential/);
    const metrics = await (
      await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${OPS}` } })
    ).text();
    assert.match(
      metrics,
      /mcp_gateway_guardrail_webhook_calls_total\{rule="company-dlp",webhook="dlp",outcome="redact"\} [1-9]/,
    );
    assert.match(
      metrics,
      /mcp_gateway_guardrail_webhook_calls_total\{rule="company-dlp",webhook="dlp",outcome="block"\} [1-9]/,
    );
  });
});

describe('a guardrail webhook in the config', () => {
  const servers = { crm: { command: 'node' } };
  const rule = (detect: unknown) => ({ name: 'dlp', on: ['results'], detect: [detect], action: 'block' });

  test('plain http beyond this machine is refused at load, naming the key', () => {
    const problems = configProblems({ servers, guardrails: [rule({ webhook: 'http://dlp.example.com/judge' })] });
    assert.ok(
      problems.some((p) =>
        /guardrails\[0\] \(dlp\)\.detect\[0\]\.webhook: http:\/\/dlp\.example\.com is not https/.test(p),
      ),
      problems.join('\n'),
    );
  });

  test('a bad timeout or an unknown key is refused; ${VAR} in its headers is expanded', () => {
    const problems = configProblems({
      servers,
      guardrails: [rule({ webhook: 'https://dlp.example.com/', timeoutMs: 0, retries: 3 })],
    });
    assert.ok(
      problems.includes('guardrails.0.detect.0.timeoutMs: Too small: expected number to be >=1'),
      `${problems}`,
    );
    assert.ok(
      problems.some((p) => p.startsWith("guardrails.0.detect.0: unknown key 'retries'")),
      `${problems}`,
    );
    const config = parseConfig(
      { servers, guardrails: [rule({ webhook: 'https://dlp.example.com/', headers: { authorization: '${TOKEN}' } })] },
      'test.yaml',
      ROOT,
      { TOKEN: 'Bearer t' },
    );
    assert.deepEqual(config.guardrails[0]?.detect[0], {
      webhook: 'https://dlp.example.com/',
      headers: { authorization: 'Bearer t' },
    });
  });
});
