// Per-caller secrets (issue 34, item 2) with real parts: server-everything (its get-env tool prints the
// child's environment) as a perCaller server with secrets:, the encrypted file store, and headless
// Chromium pasting the value on the gateway's page. alice connects through the JSON-RPC error's link, bob
// through URL-mode elicitation; each child holds its own caller's value only.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { chromium } from '../services.js';
import { launchChromium } from './connect-browser.js';
import { tempDir } from '../temp.js';
import { everything, META, request, ROOT, until, send } from './harness.js';
import { unusedPort } from '../ports.js';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp-receiver.js';
import { alive, childrenHoldingVariable } from '../processes.js';
import { writtenLog } from '../recording-log.js';

const browserNeed = await chromium('per-caller secrets pasted in headless Chromium');
const KEYS: Record<string, string> = {
  alice: 'alice-key-0123456789abcdef',
  bob: 'bob-key-0123456789abcdef',
  op: 'op-key-0123456789abcdef',
};
const SECRETS = { alice: 'alice-pat-9f8e7d6c5b4a', bob: 'bob-pat-1a2b3c4d5e6f' };
const dir = tempDir('mcp-gw-per-caller-secrets-');
const auditFile = path.join(dir, 'audit.log');

describe('per-caller secrets', { skip: browserNeed.skip }, () => {
  let gateway: RunningGateway;
  let browser: Browser;
  let publicUrl: string;
  let receiver: OtlpReceiver;
  const written = writtenLog('debug');

  before(async () => {
    browserNeed.check();
    const port = await unusedPort();
    publicUrl = `http://127.0.0.1:${port}`;
    receiver = await startOtlpReceiver();
    const raw = {
      listen: { port, publicUrl },
      auth: {
        apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })),
        operators: { ids: ['op'] },
      },
      audit: { destination: auditFile },
      telemetry: { traces: { endpoint: receiver.url, protocol: 'http/json', sampler: 'always_on' } },
      credentials: {
        key: 'a-test-credentials-key-of-32-bytes-or-more',
        store: 'file',
        file: path.join(dir, 'credentials.json'),
      },
      servers: {
        everything: { ...everything, perCaller: true, secrets: { PERSONAL_TOKEN: { prompt: 'Your personal token' } } },
      },
    };
    gateway = await startGateway(parseConfig(raw, 'test', ROOT), written.logger);
    browser = await launchChromium(browserNeed.path!);
  });

  after(async () => {
    await browser?.close();
    await gateway?.close();
    await receiver?.close();
  });

  /** The ids of every paste link handed out: single-use capabilities, never to be written anywhere else. */
  const issued: string[] = [];
  const getEnv = async (who: string, params: Record<string, unknown> = {}) => {
    const body = request('tools/call', { name: 'get-env', arguments: {}, ...params });
    const answer = await send(`${gateway.url}/servers/everything/mcp`, body, { authorization: `Bearer ${KEYS[who]}` });
    for (const [, id] of JSON.stringify(answer.body).matchAll(/\/secrets\/([\w-]{20,})/g)) issued.push(id!);
    return answer;
  };

  /** What a person does with the link: open it, paste the value, save. Returns the page's heading. */
  async function paste(link: string, value: string): Promise<string> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    await page.fill('input[type=password]', value);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    const heading = await page.textContent('h1');
    await context.close();
    return heading ?? '';
  }

  /** The gateway's children whose environment holds PERSONAL_TOKEN, with its value. */
  function childrenWithToken(): Map<number, string> {
    return childrenHoldingVariable('PERSONAL_TOKEN');
  }

  test(
    'alice without the secret gets an error carrying the link; she pastes it in the browser and the retry runs ' +
      'with it',
    async () => {
      const first = await getEnv('alice');
      assert.equal(first.body.error?.code, -32042, JSON.stringify(first.body));
      const link: string = first.body.error.data.url;
      assert.ok(link.startsWith(`${publicUrl}/secrets/`), link);
      assert.ok(first.body.error.message.includes(link), 'the message carries the link too');
      assert.equal(await paste(link, SECRETS.alice), 'Saved for everything');
      const retry = await getEnv('alice');
      assert.equal(retry.status, 200, JSON.stringify(retry.body));
      const env = JSON.stringify(retry.body.result);
      assert.ok(env.includes(SECRETS.alice), "alice's child has her value");
      assert.ok(!env.includes(SECRETS.bob));
    },
  );

  test('a used link is refused', async () => {
    const first = await getEnv('bob');
    const link: string = first.body.error.data.url;
    assert.equal(await paste(link, SECRETS.bob), 'Saved for everything');
    const again = await fetch(link);
    assert.equal(again.status, 410);
    // Bob's value is saved; take it back so the next test connects through elicitation.
    const removed = await fetch(`${gateway.url}/connections/everything`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEYS.bob}` },
    });
    assert.equal(removed.status, 200);
  });

  test(
    'bob, whose client declared elicitation.url, gets input_required with a URL-mode elicitation; the retry runs ' +
      'in a child of his own',
    async () => {
      const capabilities = {
        _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } },
      };
      const first = await getEnv('bob', capabilities);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const { resultType, inputRequests, requestState } = first.body.result;
      assert.equal(resultType, 'input_required');
      const [key, asked] = Object.entries(
        inputRequests as Record<string, { method: string; params: { mode: string; url: string } }>,
      )[0]!;
      assert.equal(asked.method, 'elicitation/create');
      assert.equal(asked.params.mode, 'url');
      assert.equal(await paste(asked.params.url, SECRETS.bob), 'Saved for everything');
      const retry = await getEnv('bob', {
        ...capabilities,
        requestState,
        inputResponses: { [key]: { action: 'accept' } },
      });
      assert.equal(retry.status, 200, JSON.stringify(retry.body));
      const env = JSON.stringify(retry.body.result);
      assert.ok(env.includes(SECRETS.bob), "bob's child has his value");
      assert.ok(!env.includes(SECRETS.alice), "and not alice's");
      const children = childrenWithToken();
      assert.deepEqual(
        [...children.values()].sort(),
        [SECRETS.alice, SECRETS.bob].sort(),
        'two children, each with its own caller’s value',
      );
    },
  );

  test(
    'callers list their secrets (never the value) and revoke them: ' + 'the child goes and the next call asks again',
    async () => {
      const listed = await fetch(`${gateway.url}/connections`, { headers: { authorization: `Bearer ${KEYS.alice}` } });
      const text = await listed.text();
      assert.equal(listed.status, 200);
      assert.deepEqual(
        JSON.parse(text).connections.map((c: { server: string; kind: string }) => [c.server, c.kind]),
        [['everything', 'secret']],
      );
      assert.ok(!text.includes(SECRETS.alice));
      assert.equal((await fetch(`${gateway.url}/connections`)).status, 401);
      const [alicePid] = [...childrenWithToken()].find(([, value]) => value === SECRETS.alice)!;
      assert.equal(
        (
          await fetch(`${gateway.url}/connections/everything`, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${KEYS.alice}` },
          })
        ).status,
        200,
      );
      const after = await getEnv('alice');
      assert.equal(after.body.error?.code, -32042, 'asked to paste again');
      assert.ok(await until(async () => !alive(alicePid), 10_000), "alice's child with the revoked value stopped");
      assert.ok([...childrenWithToken().values()].includes(SECRETS.bob), "bob's child is untouched");
    },
  );

  test('bob revokes on the connections page in a browser: his child goes, the next call asks again', async () => {
    const listed = await fetch(`${gateway.url}/connections`, { headers: { authorization: `Bearer ${KEYS.bob}` } });
    const { page: link } = (await listed.json()) as { page: string };
    assert.ok(link.startsWith(`${publicUrl}/connections/page/`), link);
    const [bobPid] = [...childrenWithToken()].find(([, value]) => value === SECRETS.bob)!;
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(link);
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Show my connections' }).click()]);
      assert.equal(await page.textContent('h1'), 'Connections of bob');
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Revoke everything' }).click()]);
      assert.equal(await page.textContent('h1'), 'Connections of bob');
      assert.match((await page.textContent('main')) ?? '', /Nothing is connected/);
    } finally {
      await context.close();
    }
    assert.equal((await getEnv('bob')).body.error?.code, -32042, 'asked to paste again');
    assert.ok(await until(async () => !alive(bobPid), 10_000), "bob's child with the revoked value stopped");
  });

  test('no secret and no paste link in logs, audit, traces, metrics, the status page or at rest', async () => {
    assert.ok(
      await until(async () => receiver.spans.some((span) => span.kind === 2), 30_000),
      'the gateway exported its spans',
    );
    const op = { authorization: `Bearer ${KEYS.op}` };
    const outputs = {
      logs: written.text(),
      audit: readFileSync(auditFile, 'utf8'),
      metrics: await (await fetch(`${gateway.url}/metrics`, op && { headers: op })).text(),
      status: await (await fetch(`${gateway.url}/status.json`, { headers: op })).text(),
      readyz: await (await fetch(`${gateway.url}/readyz`, { headers: op })).text(),
      store: readFileSync(path.join(dir, 'credentials.json'), 'utf8'),
      traces: JSON.stringify(receiver.spans),
    };
    assert.ok(outputs.audit.length > 0 && outputs.logs.length > 0, 'something was written');
    for (const [where, text] of Object.entries(outputs)) {
      for (const secret of Object.values(SECRETS)) assert.ok(!text.includes(secret), `${where} holds a secret`);
      for (const id of issued) assert.ok(!text.includes(id), `${where} holds a paste link (issue 45 item 7)`);
    }
    assert.ok(issued.length >= 3, 'links were handed out');
  });
});
