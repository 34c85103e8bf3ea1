// A caller's stored secret that Node refuses to spawn with (a NUL byte: one stored before pastes refused
// control characters, or written by hand) must not be quoted by the spawn error into the log, the caller's
// error or the status page's last error (issue 45 item 7). The record is put in the file store before the
// gateway starts, as the gateway's own store would have kept it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { openCredentialStore } from '../../src/credentials/store.js';
import { type RunningGateway, startGateway } from '../../src/gateway.js';
import { writtenLog } from '../recording-log.js';
import { unusedPort } from '../ports.js';
import { tempDir } from '../temp.js';
import { request, ROOT, send } from './harness.js';

const KEYS = { alice: 'spawn-leaks-alice-0123456789', op: 'spawn-leaks-op-0123456789' };
const SECRET = 'vault-secret-a1b2c3d4e5';
const CREDENTIALS = {
  key: 'a-test-credentials-key-of-32-bytes-or-more',
  store: 'file' as const,
  file: path.join(tempDir('spawn-error-leaks-'), 'credentials.json'),
};

describe('a spawn refused for a stored secret', () => {
  let gateway: RunningGateway;
  const written = writtenLog('debug');

  before(async () => {
    const store = await openCredentialStore(CREDENTIALS, { url: 'redis://127.0.0.1:1', keyPrefix: 'unused:' });
    await store.put('alice', 'vault', { kind: 'secret', values: { VAULT_TOKEN: `${SECRET}\u0000` }, connectedAt: 1 });
    await store.close();
    const port = await unusedPort();
    const raw = {
      listen: { port, publicUrl: `http://127.0.0.1:${port}` },
      auth: {
        apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })),
        operators: { ids: ['op'] },
      },
      credentials: CREDENTIALS,
      servers: {
        vault: {
          command: process.execPath,
          args: ['test/fixtures/faulty-server.mjs'],
          cwd: ROOT,
          era: 'modern',
          perCaller: true,
          secrets: { VAULT_TOKEN: { prompt: 'Your vault token' } },
        },
      },
    };
    gateway = await startGateway(parseConfig(raw, 'test', ROOT), written.logger);
  });

  after(() => gateway?.close());

  test('names the variable and never quotes the value: the log, the caller’s error, the status page', async () => {
    const body = request('tools/call', { name: 'pid', arguments: {} });
    const answer = await send(`${gateway.url}/servers/vault/mcp`, body, { authorization: `Bearer ${KEYS.alice}` });
    assert.ok(answer.body.error, JSON.stringify(answer.body));
    const status = () => fetch(`${gateway.url}/status.json`, { headers: { authorization: `Bearer ${KEYS.op}` } });
    const outputs = {
      error: JSON.stringify(answer.body),
      logs: written.text(),
      status: await (await status()).text(),
    };
    assert.match(outputs.error, /VAULT_TOKEN/, 'the caller is told which variable');
    for (const [where, text] of Object.entries(outputs)) {
      assert.equal(text.includes(SECRET), false, `the secret in ${where}: ${text}`);
      assert.equal(text.includes('vault-secret'), false, `part of the secret in ${where}`);
    }
  });
});
