// Issue 33's connect placeholder for a perCaller server with secrets: (issue 34): until a caller has pasted
// their values, /mcp shows them `everything__connect`, whose call links to the paste page; once pasted, the
// server's own tools are listed, and a 2025 client's GET stream on /mcp hears tools/list_changed. (Apart
// from connect-placeholder.test.ts: a process that also runs @hono/node-server's serve(), as that file's
// identity server does, breaks the gateway's 2025 GET streams — Hono's "already sent" marker is not
// recognised — so this file starts no other server.)
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { tempDir } from '../temp.js';
import { unusedPort } from '../ports.js';
import { eventually, everything, headersFor, post, request, ROOT } from './harness.js';

describe('a perCaller server with secrets: shows its placeholder until the caller has pasted their values', () => {
  let gateway: RunningGateway;
  let publicUrl: string;
  const KEY = 'carol-api-key-0123456789abcdef';

  before(async () => {
    const port = await unusedPort();
    publicUrl = `http://127.0.0.1:${port}`;
    const config = parseConfig(
      {
        listen: { port, publicUrl },
        auth: { apiKeys: [{ key: KEY, principal: 'carol' }] },
        credentials: {
          key: 'a-connect-placeholder-key-of-32-bytes-or-more',
          store: 'file',
          file: path.join(tempDir('connect-placeholder-secrets-'), 'credentials.json'),
        },
        servers: {
          everything: {
            ...everything,
            perCaller: true,
            secrets: { PERSONAL_TOKEN: { prompt: 'Your personal token' } },
          },
        },
      },
      'test',
      ROOT,
    );
    gateway = await startGateway(config, silentLog);
  });

  after(async () => {
    await gateway?.close();
  });

  const send = (body: ReturnType<typeof request>) =>
    post(`${gateway.url}/mcp`, body, { ...headersFor(body), authorization: `Bearer ${KEY}` });

  test(
    'the placeholder asks for values, its call links to the paste page, and once pasted the server’s own tools ' +
      'are listed; a 2025 client’s GET stream hears it',
    async () => {
      // A 2025 client (SDK 1.x) on /mcp: it sees the placeholder too, and its session's GET stream is open.
      const legacy = new Client1({ name: 'connect-placeholder-2025', version: '1.0.0' });
      const changed: string[] = [];
      legacy.setNotificationHandler(ToolListChangedNotificationSchema, async (n) => void changed.push(n.method));
      await legacy.connect(
        new Transport1(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }),
      );
      try {
        assert.deepEqual(
          (await legacy.listTools()).tools.map((t) => t.name),
          ['everything__connect'],
        );
        await eventually(() => gateway.listen.size === 1, 10_000); // its GET stream

        const before = (await send(request('tools/list'))).body.result.tools as { name: string; description: string }[];
        assert.deepEqual(
          before.map((t) => t.name),
          ['everything__connect'],
        );
        assert.match(before[0]!.description, /values of your own/);
        const answer = await send(request('tools/call', { name: 'everything__connect', arguments: {} }));
        assert.equal(answer.body.error?.code, -32042, JSON.stringify(answer.body));
        const link: string = answer.body.error.data.url;
        assert.ok(link.startsWith(`${publicUrl}/secrets/`), link);
        // What the paste page's form does, without a browser: its single-use id and the value.
        const page = await (await fetch(link)).text();
        const id = /name="link" value="([^"]+)"/.exec(page)?.[1];
        assert.ok(id, page);
        const saved = await fetch(`${publicUrl}/secrets/save`, {
          method: 'POST',
          body: new URLSearchParams({ link: id!, 'value:PERSONAL_TOKEN': 'carol-token-0123' }),
          headers: { origin: publicUrl }, // as the page's own form sends it
        });
        assert.equal(saved.status, 200, await saved.text());
        const after = ((await send(request('tools/list'))).body.result.tools as { name: string }[]).map((t) => t.name);
        assert.ok(after.includes('everything__echo'), after.join());
        assert.ok(!after.includes('everything__connect'), after.join());
        await eventually(() => changed.length === 1, 10_000);
        assert.ok((await legacy.listTools()).tools.some((t) => t.name === 'everything__echo'));
      } finally {
        await legacy.close();
      }
    },
  );
});
