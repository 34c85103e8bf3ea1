// Guardrails end to end (issue 48), on realistic payloads from test/fixtures/content-server.mjs: a CRM record's
// card number and IBAN redacted (text and structuredContent, still valid for a validating SDK client), a GitHub
// issue body's AWS key blocked naming the rule and never the key, a planted instruction logged and counted,
// secrets in arguments never reaching the server, a stream's progress redacted before it is written, a .env
// resource redacted for one group and on a cache hit too, prompts redacted on a profile only; through /mcp,
// /servers/<n>/mcp, a profile, search mode and a 2025 client. Then the canonical-URI refusals (item 4).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { eventually, post, request, ROOT, textOf, VERSION } from './harness.js';
import { exchange, initializeBody, legacy, legacyHeaders, legacyResult } from './legacy-clients-kit.js';
import { startReadyGateway } from './ready-gateway.js';
import { tempDir } from '../temp.js';

const tmp = tempDir('mcp-gw-guardrails-');
after(() => rmSync(tmp, { recursive: true, force: true }));

const KEYS = { alice: 'alice-key-0123456789', bob: 'bob-key-0123456789-abcdef', ops: 'ops-key-0123456789-ops' };
const as = (who: keyof typeof KEYS) => ({ authorization: `Bearer ${KEYS[who]}` });
const GITHUB_TOKEN = ['ghp', '_', '1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R'].join('');
const AWS_KEY = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');

function contentServer(record: string): Record<string, unknown> {
  return {
    command: process.execPath,
    args: ['test/fixtures/content-server.mjs'],
    cwd: ROOT,
    era: 'modern',
    env: { RECORD_FILE: record },
  };
}

const GUARDRAILS = [
  {
    name: 'no-card-numbers-out',
    on: ['results'],
    servers: ['crm'],
    detect: ['creditCard', 'iban', 'email'],
    action: 'redact',
  },
  { name: 'no-secrets-in', on: ['arguments', 'results'], detect: ['secrets'], action: 'block' },
  { name: 'cards-in-arguments', on: ['arguments'], detect: ['creditCard'], action: 'redact' },
  { name: 'injection', on: ['results'], detect: ['promptInjection'], action: 'log' },
  { name: 'env-files', on: ['resources'], principals: { groups: ['support'] }, detect: ['secrets'], action: 'redact' },
  {
    name: 'support-prompts',
    on: ['prompts'],
    endpoints: ['/profiles/support/mcp'],
    detect: ['email'],
    action: 'redact',
  },
];

/** Lines the fixture recorded, parsed. */
function recorded(file: string): unknown[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
}

describe('guardrails', () => {
  let gateway: RunningGateway;
  const crmRecord = path.join(tmp, 'crm.jsonl');
  const webRecord = path.join(tmp, 'web.jsonl');
  const auditFile = path.join(tmp, 'audit.jsonl');
  const call = (url: string, name: string, args: Record<string, unknown> = {}, who: keyof typeof KEYS = 'alice') => {
    const body = request('tools/call', { name, arguments: args });
    return post(url, body, { ...headers(body), ...as(who) });
  };
  const headers = (body: { method: string; params?: Record<string, unknown> }) => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': body.method,
    ...(typeof body.params?.name === 'string' ? { 'mcp-name': body.params.name } : {}),
    ...(typeof body.params?.uri === 'string' ? { 'mcp-name': body.params.uri } : {}),
  });
  const auditLines = async (ready: (lines: any[]) => boolean): Promise<any[]> => {
    let lines: any[] = [];
    await eventually(async () => {
      await gateway.security.current.audit!.flush();
      lines = existsSync(auditFile)
        ? readFileSync(auditFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line))
        : [];
      return ready(lines);
    }, 10_000).catch(() => undefined);
    return lines;
  };

  const servers = { crm: contentServer(crmRecord), web: contentServer(webRecord) };
  const rest = (guardrails: unknown[]) => ({
    auth: {
      apiKeys: [
        { key: KEYS.alice, principal: 'alice', groups: ['support'] },
        { key: KEYS.bob, principal: 'bob' },
        { key: KEYS.ops, principal: 'ops' },
      ],
      operators: { ids: ['ops'] },
    },
    profiles: { support: { tools: ['crm__*'], prompts: ['crm__*'] } },
    audit: { destination: auditFile, arguments: true },
    guardrails,
  });

  before(async () => {
    gateway = await startReadyGateway(servers, {}, rest(GUARDRAILS));
  });
  after(() => gateway?.close());

  test('a CRM record: card number and IBAN redacted in text and structuredContent on /mcp', async () => {
    const answer = await call(`${gateway.url}/mcp`, 'crm__crm_record');
    assert.equal(answer.status, 200);
    const result = answer.body.result;
    assert.deepEqual(result.structuredContent, {
      customer: 'Jane Roe',
      orderId: 'ORD-20261207-000123',
      card: '[redacted:creditCard]',
      iban: '[redacted:iban]',
    });
    assert.doesNotMatch(textOf(answer), /4111|GB82/);
    assert.match(textOf(answer), /ORD-20261207-000123/, 'an order id is no card number');
    // The same tool on a server the rule does not name passes untouched.
    const web = await call(`${gateway.url}/mcp`, 'web__crm_record');
    assert.equal(web.body.result.structuredContent.card, '4111 1111 1111 1111');
  });

  test('a validating SDK client accepts the redacted result against the tool outputSchema', async () => {
    const client = new Client(
      { name: 'guardrails-e2e', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: VERSION } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/servers/crm/mcp`), {
        requestInit: { headers: as('alice') },
      }),
    );
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.find((tool) => tool.name === 'crm_record')?.outputSchema, 'the tool declares an outputSchema');
      const result = await client.callTool({ name: 'crm_record', arguments: {} });
      assert.deepEqual(result.structuredContent, {
        customer: 'Jane Roe',
        orderId: 'ORD-20261207-000123',
        card: '[redacted:creditCard]',
        iban: '[redacted:iban]',
      });
    } finally {
      await client.close();
    }
  });

  test("a redaction the tool's outputSchema would refuse (a pattern) refuses the answer instead", async () => {
    for (const [url, name] of [
      [`${gateway.url}/mcp`, 'crm__crm_strict'],
      [`${gateway.url}/servers/crm/mcp`, 'crm_strict'],
    ] as const) {
      const answer = await call(url, name);
      assert.equal(answer.body.error?.code, -32602, `${name}: ${JSON.stringify(answer.body)}`);
      assert.match(answer.body.error.message, /guardrail no-card-numbers-out: .*outputSchema/);
      assert.doesNotMatch(JSON.stringify(answer.body), /4111/);
    }
  });

  test('a card number held in a JSON number is refused rather than sent changed', async () => {
    const answer = await call(`${gateway.url}/servers/crm/mcp`, 'card_as_number');
    assert.equal(answer.body.error?.code, -32602);
    assert.match(answer.body.error.message, /guardrail no-card-numbers-out/);
    assert.doesNotMatch(JSON.stringify(answer.body), /4111111111111111/);
  });

  test('a GitHub issue body with an AWS key is blocked, naming the rule and never the key', async () => {
    for (const url of [`${gateway.url}/mcp`, `${gateway.url}/servers/web/mcp`]) {
      const answer = await call(
        url,
        url.endsWith('/mcp') && !url.includes('servers') ? 'web__github_issue' : 'github_issue',
      );
      assert.equal(answer.body.error?.code, -32602, JSON.stringify(answer.body));
      assert.match(answer.body.error.message, /^Refused by guardrail no-secrets-in: the result held secrets/);
      assert.deepEqual(answer.body.error.data, {
        guardrail: 'no-secrets-in',
        stage: 'results',
        detectors: ['secrets'],
      });
      assert.doesNotMatch(JSON.stringify(answer.body), new RegExp(AWS_KEY));
    }
  });

  test('arguments: a token never reaches the server; a card number reaches it redacted', async () => {
    const blocked = await call(`${gateway.url}/servers/crm/mcp`, 'echo', { note: `token ${GITHUB_TOKEN}` });
    assert.match(blocked.body.error?.message ?? '', /guardrail no-secrets-in: the arguments held secrets/);
    const redacted = await call(`${gateway.url}/servers/crm/mcp`, 'echo', { note: 'card 5555 5555 5555 4444' });
    assert.equal(textOf(redacted), '{"note":"card [redacted:creditCard]"}');
    const lines = JSON.stringify(recorded(crmRecord));
    assert.doesNotMatch(lines, /ghp_/);
    assert.doesNotMatch(lines, /5555 5555/);
    assert.match(lines, /redacted:creditCard/);
    // audit.arguments is on: the request's own audit lines hold the arguments as redacted, never as found.
    const audit = await auditLines(
      (all) => all.filter((line) => line.method === 'tools/call' && line.arguments).length >= 2,
    );
    const withArguments = JSON.stringify(audit.filter((line) => line.arguments));
    assert.match(withArguments, /\[redacted:secrets\]/);
    assert.match(withArguments, /\[redacted:creditCard\]/);
    assert.doesNotMatch(withArguments, /ghp_|5555 5555/);
  });

  test('a planted instruction is logged (audit and metrics) and passed on', async () => {
    const answer = await call(`${gateway.url}/servers/web/mcp`, 'fetch_page');
    assert.match(textOf(answer), /Ignore all previous instructions/);
    const lines = await auditLines((all) => all.some((line) => line.rule === 'guardrail injection'));
    const line = lines.find((l) => l.rule === 'guardrail injection');
    assert.deepEqual(line?.guardrail, { action: 'log', stage: 'results', detectors: ['promptInjection'] });
    assert.equal(line.principal, 'alice');
    assert.equal(line.endpoint, '/servers/web/mcp');
    const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: as('ops') })).text();
    assert.match(
      metrics,
      /mcp_gateway_guardrail_decisions_total\{rule="injection",action="log",stage="results"\} [1-9]/,
    );
  });

  test('SSE: a progress message is redacted before it is written', async () => {
    const body = request('tools/call', { name: 'crm__progress_card', arguments: {}, _meta: { progressToken: 'p1' } });
    const answer = await post(`${gateway.url}/mcp`, body, { ...headers(body), ...as('alice') });
    assert.equal(answer.headers.get('content-type')?.startsWith('text/event-stream'), true);
    const progress = answer.events.find((event) => event.method === 'notifications/progress');
    assert.equal(progress?.params.message, 'charging [redacted:creditCard]');
    assert.equal(textOf(answer.body), 'charged');
  });

  test('a .env resource: redacted for the support group, on a cache hit too; not for others', async () => {
    const read = (who: keyof typeof KEYS) => {
      const body = request('resources/read', { uri: 'file:///app/.env' });
      return post(`${gateway.url}/servers/crm/mcp`, body, { ...headers(body), ...as(who) });
    };
    const first = await read('alice');
    const second = await read('alice');
    for (const answer of [first, second])
      assert.equal(answer.body.result?.contents[0].text, 'NODE_ENV=production\nGITHUB_TOKEN=[redacted:secrets]\n');
    const reads = recorded(crmRecord).filter((line: any) => line?.read === 'file:///app/.env');
    assert.equal(reads.length, 1, 'the second read was a cache hit, judged all the same');
    assert.match((await read('bob')).body.result?.contents[0].text, /ghp_/);
  });

  test('prompts are redacted on the profile the rule names, not on /mcp', async () => {
    const get = (url: string, name: string) => {
      const body = request('prompts/get', { name });
      return post(url, body, { ...headers(body), ...as('alice') });
    };
    const profiled = await get(`${gateway.url}/profiles/support/mcp`, 'crm__support');
    assert.equal(profiled.body.result?.messages[0].content.text, 'Reply to [redacted:email] about her order');
    const plain = await get(`${gateway.url}/mcp`, 'crm__support');
    assert.match(plain.body.result?.messages[0].content.text, /jane\.roe@example\.com/);
  });

  test('search mode: call_tool is judged as the tool it calls', async () => {
    const body = request('tools/call', { name: 'call_tool', arguments: { name: 'crm__crm_record', arguments: {} } });
    const answer = await post(`${gateway.url}/search/mcp`, body, { ...headers(body), ...as('alice') });
    assert.equal(answer.body.result?.structuredContent?.card, '[redacted:creditCard]', JSON.stringify(answer.body));
  });

  test('a 2025 client gets the same redaction', async () => {
    const url = `${gateway.url}/mcp`;
    const init = await exchange(url, 'POST', { ...legacyHeaders(), ...as('alice') }, initializeBody('2025-06-18'));
    const session = { url, id: init.headers.get('mcp-session-id') ?? '', version: init.body?.result?.protocolVersion };
    assert.ok(session.id, init.text);
    const sessionHeaders = { ...legacyHeaders(session), ...as('alice') };
    await exchange(url, 'POST', sessionHeaders, { jsonrpc: '2.0', method: 'notifications/initialized' });
    const answer = await exchange(
      url,
      'POST',
      sessionHeaders,
      legacy('tools/call', { name: 'crm__crm_record', arguments: {} }),
    );
    const result = legacyResult(answer);
    assert.equal(result.structuredContent.card, '[redacted:creditCard]');
    assert.doesNotMatch(answer.text, /4111/);
  });

  test('a reload without guardrails serves the next answer unjudged', async () => {
    const problems = await gateway.reload(parseConfig({ listen: { port: 0 }, servers, ...rest([]) }, 'test', ROOT));
    assert.deepEqual(problems, []);
    assert.equal(gateway.security.current.guardrails, undefined);
    const answer = await call(`${gateway.url}/mcp`, 'crm__crm_record');
    assert.equal(answer.body.result?.structuredContent?.card, '4111 1111 1111 1111');
  });
});

describe('canonical resource URIs (issue 48 item 4)', () => {
  let gateway: RunningGateway;
  const record = path.join(tmp, 'uris.jsonl');
  before(async () => {
    gateway = await startReadyGateway(
      { crm: contentServer(record) },
      {},
      {
        auth: { anonymous: true },
        audit: { destination: path.join(tmp, 'uris-audit.jsonl') },
        policies: [
          {
            name: 'everyone',
            principals: { ids: ['anonymous'] },
            allow: { servers: ['crm'] },
            deny: { resources: ['demo://resource/dynamic/text/1', 'ui://b__dashboard/pages/secret'] },
          },
        ],
      },
    );
  });
  after(() => gateway?.close());

  const read = (endpoint: string, uri: string) => {
    const body = request('resources/read', { uri });
    return post(`${gateway.url}${endpoint}`, body);
  };

  test('the bypass spellings are refused naming the canonical URI, and never reach the server', async () => {
    const bypasses: [string, string][] = [
      ['DEMO://resource/dynamic/./text/1', 'demo://resource/dynamic/text/1'],
      ['demo://resource/dynamic/text/x/../1', 'demo://resource/dynamic/text/1'],
      ['demo://resource/dynamic/%2e/text/1', 'demo://resource/dynamic/text/1'],
      ['Demo://resource/dynamic/text/1', 'demo://resource/dynamic/text/1'],
      ['UI://b__dashboard/pages/secret', 'ui://b__dashboard/pages/secret'],
      ['ui://b__dashboard/./pages/secret', 'ui://b__dashboard/pages/secret'],
    ];
    for (const endpoint of ['/mcp', '/servers/crm/mcp']) {
      for (const [spelled, canonical] of bypasses) {
        const answer = await read(endpoint, spelled);
        assert.equal(answer.body.error?.code, -32602, `${endpoint} ${spelled}: ${JSON.stringify(answer.body)}`);
        assert.match(answer.body.error.message, /is not in canonical form/);
        assert.deepEqual(answer.body.error.data, { uri: spelled, canonical });
      }
    }
    // The canonical spelling meets the deny, as written.
    const denied = await read('/servers/crm/mcp', 'demo://resource/dynamic/text/1');
    assert.match(denied.body.error?.message ?? '', /^Resource not found/);
    const reads = recorded(record).filter((line: any) => typeof line?.read === 'string');
    assert.deepEqual(reads, [], 'no spelling reached the server');
  });

  test('a listen subscribing to a respelled URI, and a completion naming one, are refused too', async () => {
    const listen = request('subscriptions/listen', {
      notifications: { resourceSubscriptions: ['demo://resource/dynamic/text/1/../1'] },
    });
    const refused = await post(`${gateway.url}/servers/crm/mcp`, listen);
    assert.equal(refused.body?.error?.code, -32602, JSON.stringify(refused.body));
    assert.equal(refused.body.error.data.canonical, 'demo://resource/dynamic/text/1');
    const completion = request('completion/complete', {
      ref: { type: 'ref/resource', uri: 'DEMO://resource/{id}' },
      argument: { name: 'id', value: '1' },
    });
    const alsoRefused = await post(`${gateway.url}/servers/crm/mcp`, completion);
    assert.equal(alsoRefused.body?.error?.data?.canonical, 'demo://resource/{id}', JSON.stringify(alsoRefused.body));
  });
});
