// The connect flow's form routes on a real gateway (issue 45 items 5 and 7): a 200 MB form to the paste
// route is refused with 413 long before it is all sent, declared or streamed, and the gateway's memory does
// not follow it (it went from 107 MB to 1.07 GB before the cap); a pasted value with a NUL is refused at
// paste time naming its field, and the same link then saves a clean value. No browser: the requests are what
// a browser's form sends (its Origin included).
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { type RunningGateway, startGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { unusedPort } from '../ports.js';
import { tempDir } from '../temp.js';
import { everything, request, ROOT, send } from './harness.js';

const KEY = 'connect-bodies-key-0123456789';
const MiB = 1024 * 1024;

describe('the connect flow refuses large and unprintable forms', () => {
  let gateway: RunningGateway;
  let publicUrl: string;

  before(async () => {
    const port = await unusedPort();
    publicUrl = `http://127.0.0.1:${port}`;
    const raw = {
      listen: { port, publicUrl },
      auth: { apiKeys: [{ key: KEY, principal: 'alice' }] },
      credentials: {
        key: 'a-test-credentials-key-of-32-bytes-or-more',
        store: 'file',
        file: path.join(tempDir('connect-bodies-'), 'credentials.json'),
      },
      servers: { vault: { ...everything, perCaller: true, secrets: { VAULT_TOKEN: { prompt: 'Your vault token' } } } },
    };
    gateway = await startGateway(parseConfig(raw, 'test', ROOT), silentLog);
  });

  after(() => gateway?.close());

  /** A fresh paste link of alice's, and its id. */
  async function pasteLink(): Promise<{ link: string; id: string }> {
    const body = request('tools/call', { name: 'get-env', arguments: {} });
    const answer = await send(`${gateway.url}/servers/vault/mcp`, body, { authorization: `Bearer ${KEY}` });
    const link: string = answer.body.error?.data?.url;
    assert.ok(link?.startsWith(`${publicUrl}/secrets/`), JSON.stringify(answer.body));
    return { link, id: link.slice(link.lastIndexOf('/') + 1) };
  }

  /**
   * Sends up to 200 MiB of form to /secrets/save, a MiB at a time and only while no answer has come; the
   * answer's status and how much was sent by then.
   */
  function sendHugeForm(declared: boolean): Promise<{ status: number; sent: number }> {
    const total = 200 * MiB;
    return new Promise((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const headers: Record<string, string | number> = {
        'content-type': 'application/x-www-form-urlencoded',
        origin: publicUrl,
      };
      if (declared) headers['content-length'] = total;
      const req = httpRequest(`${publicUrl}/secrets/save`, { method: 'POST', headers }, (res) => {
        answered = true;
        res.resume();
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, sent });
          req.destroy();
        });
      });
      req.on('error', (error) => {
        if (!answered) reject(error);
      });
      const chunk = Buffer.alloc(MiB, 'a');
      const pump = () => {
        while (!answered && sent < total) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) req.end();
      };
      req.write('link=x&value%3AVAULT_TOKEN=');
      pump();
    });
  }

  for (const declared of [true, false]) {
    const how = declared ? 'its length declared' : 'streamed, no length';
    test(`a 200 MB form (${how}) is refused with 413 before it is all sent`, async () => {
      const before = process.memoryUsage().rss;
      const { status, sent } = await sendHugeForm(declared);
      assert.equal(status, 413);
      assert.ok(sent < 200 * MiB, `refused before the whole body was sent (${sent / MiB} MiB sent)`);
      const grown = (process.memoryUsage().rss - before) / MiB;
      assert.ok(grown < 150, `the gateway's memory did not follow the body (grew ${grown.toFixed(0)} MiB)`);
      // The gateway still serves its pages.
      assert.equal((await fetch((await pasteLink()).link)).status, 200);
    });
  }

  test('a NUL in a pasted secret is refused naming the field; the same link then saves a clean value', async () => {
    const { id } = await pasteLink();
    const save = (value: string) =>
      fetch(`${publicUrl}/secrets/save`, {
        method: 'POST',
        body: new URLSearchParams({ link: id, 'value:VAULT_TOKEN': value }),
        headers: { origin: publicUrl },
      });
    const refused = await save('vault-\u0000-token');
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /\(VAULT_TOKEN\) holds a control character \(such as NUL\)/);
    const saved = await save('vault-token-0123\n');
    assert.equal(saved.status, 200, await saved.text());
  });
});
