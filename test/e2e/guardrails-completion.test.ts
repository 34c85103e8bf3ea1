// Guardrails on completion/complete (issue 48), against test/fixtures/content-server.mjs, whose completions
// suggest what its stores hold (customers' email addresses, database URLs). A completion's values are judged as
// the content of the item they complete: a prompt's by its `prompts` rules, a resource template's by its
// `resources` rules (redacted, or refused naming the rule and never the value); what the caller typed (its
// argument, and the arguments given before in `context`) goes up judged by the `arguments` rules, and a blocked
// one never reaches the server. Through /mcp, /servers/<n>/mcp, a profile, the SDK v2 client and a 2025 client
// (SDK 1.x).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningGateway } from '../../src/gateway.js';
import { tempDir } from '../temp.js';
import { eventually, headersFor, post, request, ROOT, VERSION } from './harness.js';
import { startReadyGateway } from './ready-gateway.js';

const tmp = tempDir('mcp-gw-guardrails-completion-');
after(() => rmSync(tmp, { recursive: true, force: true }));

// Fake credentials, assembled so that no scanner flags this file itself.
const AWS_KEY = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');
const CARD = '4111 1111 1111 1111';
const EMAIL = '[redacted:email]';

const GUARDRAILS = [
  { name: 'no-secrets', on: ['arguments', 'prompts'], detect: ['secrets'], action: 'block' },
  { name: 'emails-out', on: ['prompts', 'resources'], servers: ['crm'], detect: ['email'], action: 'redact' },
  { name: 'cards-in', on: ['arguments'], detect: ['creditCard'], action: 'redact' },
];

const promptRef = (name: string) => ({ type: 'ref/prompt' as const, name });
const templateRef = { type: 'ref/resource' as const, uri: 'crm://customers/{email}' };

describe('guardrails on completion/complete', () => {
  let gateway: RunningGateway;
  const record = path.join(tmp, 'crm.jsonl');
  const auditFile = path.join(tmp, 'audit.jsonl');

  const complete = (url: string, params: Record<string, unknown>) => {
    const body = request('completion/complete', params);
    return post(url, body, headersFor(body));
  };
  /** The completion requests the server received, by the value typed. */
  const received = (): { argument: { value: string }; context?: { arguments: Record<string, string> } }[] =>
    (existsSync(record) ? readFileSync(record, 'utf8') : '')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((line) => line.complete !== undefined)
      .map((line) => line.complete);

  before(async () => {
    gateway = await startReadyGateway(
      {
        crm: {
          command: process.execPath,
          args: ['test/fixtures/content-server.mjs'],
          cwd: ROOT,
          era: 'modern',
          env: { RECORD_FILE: record },
        },
      },
      {},
      {
        auth: { anonymous: true },
        audit: { destination: auditFile },
        profiles: { support: { prompts: ['crm__*'], rename: { crm__customer_reply: 'reply' } } },
        guardrails: GUARDRAILS,
      },
    );
  });
  after(() => gateway?.close());

  test("a prompt's suggestions pass its prompts rules, and a validating SDK client accepts them", async () => {
    const client = new Client(
      { name: 'guardrails-completion', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: VERSION } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    try {
      const { completion } = await client.complete({
        ref: promptRef('crm__customer_reply'),
        argument: { name: 'customer', value: 'j' },
      });
      assert.deepEqual(completion.values, [EMAIL, EMAIL, EMAIL]);
      assert.equal(completion.total, 3);
    } finally {
      await client.close();
    }
    const own = await complete(`${gateway.url}/servers/crm/mcp`, {
      ref: promptRef('customer_reply'),
      argument: { name: 'customer', value: 'jane' },
    });
    assert.deepEqual(own.body.result?.completion?.values, [EMAIL], JSON.stringify(own.body));
    // On a profile, under the prompt's name there: the rules still choose it by its server (and /mcp name).
    const profiled = await complete(`${gateway.url}/profiles/support/mcp`, {
      ref: promptRef('reply'),
      argument: { name: 'customer', value: 'john' },
    });
    assert.deepEqual(profiled.body.result?.completion?.values, [EMAIL], JSON.stringify(profiled.body));
  });

  test("a resource template's suggestions pass its resources rules", async () => {
    for (const url of [`${gateway.url}/mcp`, `${gateway.url}/servers/crm/mcp`]) {
      const answer = await complete(url, { ref: templateRef, argument: { name: 'email', value: 'jo' } });
      assert.deepEqual(answer.body.result?.completion?.values, [EMAIL], `${url}: ${JSON.stringify(answer.body)}`);
      assert.doesNotMatch(JSON.stringify(answer.body), /john\.doe/);
    }
  });

  test(
    "a suggestion holding a database URL's password is refused, " + 'naming the rule and never the password',
    async () => {
      const answer = await complete(`${gateway.url}/mcp`, {
        ref: promptRef('crm__db_report'),
        argument: { name: 'database', value: 'postgres://' },
      });
      assert.equal(answer.body.error?.code, -32602, JSON.stringify(answer.body));
      assert.match(answer.body.error.message, /^Refused by guardrail no-secrets: the prompts held secrets/);
      assert.deepEqual(answer.body.error.data, { guardrail: 'no-secrets', stage: 'prompts', detectors: ['secrets'] });
      assert.doesNotMatch(JSON.stringify(answer.body), /s3cret|R3port/);
      // A suggestion without a password passes.
      const replica = await complete(`${gateway.url}/mcp`, {
        ref: promptRef('crm__db_report'),
        argument: { name: 'database', value: 'postgres://replica' },
      });
      assert.deepEqual(replica.body.result?.completion?.values, ['postgres://replica.internal:5432/sales']);
      await eventually(async () => {
        await gateway.security.current.audit!.flush();
        const audit = existsSync(auditFile) ? readFileSync(auditFile, 'utf8') : '';
        return /"method":"completion\/complete".*"rule":"guardrail no-secrets"/.test(audit);
      }, 10_000);
    },
  );

  test('what the caller typed is judged before the server sees it: a key blocked, a card redacted', async () => {
    for (const [url, ref] of [
      [`${gateway.url}/mcp`, promptRef('crm__customer_reply')],
      [`${gateway.url}/servers/crm/mcp`, templateRef],
    ] as const) {
      const refused = await complete(url, { ref, argument: { name: 'customer', value: `key ${AWS_KEY}` } });
      assert.equal(refused.body.error?.code, -32602, JSON.stringify(refused.body));
      assert.match(refused.body.error.message, /^Refused by guardrail no-secrets: the arguments held secrets/);
      assert.doesNotMatch(JSON.stringify(refused.body), new RegExp(AWS_KEY));
    }
    // A control down the same pipe: once it arrived, a refused request that had been sent would have too.
    const control = await complete(`${gateway.url}/mcp`, {
      ref: promptRef('crm__customer_reply'),
      argument: { name: 'customer', value: 'control' },
      context: { arguments: { note: `paid with ${CARD}` } },
    });
    assert.deepEqual(control.body.result?.completion?.values, [], JSON.stringify(control.body));
    const sent = received();
    assert.ok(
      sent.some((params) => params.argument.value === 'control'),
      'the control reached the server',
    );
    assert.doesNotMatch(JSON.stringify(sent), new RegExp(`${AWS_KEY}|4111`));
    const last = sent.find((params) => params.argument.value === 'control')!;
    assert.deepEqual(last.context, { arguments: { note: 'paid with [redacted:creditCard]' } });
  });

  test('a 2025 client (SDK 1.x) gets the same suggestions redacted', async () => {
    const client = new Client1({ name: 'guardrails-completion-2025', version: '1.0.0' });
    await client.connect(new Transport1(new URL(`${gateway.url}/mcp`)));
    try {
      const { completion } = await client.complete({
        ref: { type: 'ref/resource', uri: 'crm://customers/{email}' },
        argument: { name: 'email', value: 'j.' },
      });
      assert.deepEqual(completion.values, [EMAIL]);
    } finally {
      await client.close();
    }
  });
});
