// A server's title (servers.<name>.title) changed by a reload shows at once on its connect page, as it does on
// the paste page: the pages read the config in force, not the one the gateway started with. No browser and
// no authorization server: the confirmation page a GET of the link shows (which spends nothing) is enough.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { type RunningGateway, startGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { unusedPort } from '../ports.js';
import { tempDir } from '../temp.js';
import { request, ROOT, send } from './harness.js';

const KEY = 'connect-title-key-0123456789';

describe('a reloaded server title on the connect page', () => {
  let gateway: RunningGateway;
  let config: (title: string) => ReturnType<typeof parseConfig>;

  before(async () => {
    const port = await unusedPort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const file = path.join(tempDir('connect-title-'), 'credentials.json');
    // Nothing listens at the issuer: the page shows without its destination, and no call gets that far.
    const issuer = `http://127.0.0.1:${await unusedPort()}`;
    config = (title) =>
      parseConfig(
        {
          listen: { port, publicUrl },
          auth: { apiKeys: [{ key: KEY, principal: 'alice' }] },
          credentials: { key: 'a-test-credentials-key-of-32-bytes-or-more', store: 'file', file },
          servers: {
            github: {
              title,
              command: process.execPath,
              args: ['test/fixtures/token-env-server.mjs', 'GITHUB_TOKEN'],
              cwd: ROOT,
              era: 'modern',
              perCaller: true,
              credentials: { type: 'oauth', clientId: 'gw', env: 'GITHUB_TOKEN', issuer },
            },
          },
        },
        'test',
        ROOT,
      );
    gateway = await startGateway(config('GitHub Old Name'), silentLog);
  });

  after(() => gateway?.close());

  /** The connect page of alice's live link for github, as a browser's GET shows it. */
  async function connectPage(): Promise<string> {
    const body = request('tools/call', { name: 'whoami', arguments: {} });
    const answer = await send(`${gateway.url}/servers/github/mcp`, body, { authorization: `Bearer ${KEY}` });
    const link: string = answer.body.error?.data?.url;
    assert.match(link ?? '', /\/connect\//, JSON.stringify(answer.body));
    const page = await fetch(link);
    assert.equal(page.status, 200);
    return page.text();
  }

  test('the page names the title in force, before and after a reload', async () => {
    const before = await connectPage();
    assert.match(before, /Connect GitHub Old Name/);
    await gateway.reload(config('GitHub Enterprise'));
    const after = await connectPage();
    assert.match(after, /Connect GitHub Enterprise/, after);
    assert.equal(after.includes('GitHub Old Name'), false, after);
  });
});
