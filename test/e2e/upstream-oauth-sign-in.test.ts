// The person completing a connect link must be the principal it was made for (issue 33; the spec's URL-mode
// elicitation security). With auth.jwt, whose issuer (oidc-provider here) has an authorization endpoint, the
// link first signs the person in at that issuer (OIDC code + PKCE) and the ID token's `sub` must be the
// link's principal. Headless Chromium plays the people: alice completes her own link; bob's link, forwarded
// to alice and completed by her, is refused with a page saying so, and nothing is connected for bob.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../infra/logger.js';
import { startIdentityServer, type IdentityServer } from '../fixtures/identity-server.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { callToolAs, startOAuthRig, type OAuthRig } from './oauth-rig.js';

const browserNeed = await chromium('the connect-link sign-in in headless Chromium');
const GATEWAY = 'https://gateway.test/mcp';

describe('connect links with auth.jwt: the person signs in at the issuer and must be the link principal', {
  skip: browserNeed.skip,
}, () => {
  let rig: OAuthRig<IdentityServer>;
  let gateway: RunningGateway;
  let browser: Browser;
  let publicUrl: string;
  const tokens = new Map<string, string>();
  const upstreamClient = { client_id: 'gw-upstream', client_secret: 'gw-upstream-secret-0123456789' };
  const signInClient = { client_id: 'gw-sign-in', client_secret: 'gw-sign-in-secret-0123456789' };

  before(async () => {
    browserNeed.check();
    // One oidc-provider is both the issuer of callers' tokens (where people sign in) and the upstream's AS.
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client: upstreamClient,
      otherClients: (url) => [{ ...signInClient, redirect_uris: [`${url}/connect/signed-in`] }],
      callerAudience: GATEWAY,
      upstream: startIdentityServer,
      config: (at) => ({
        auth: { jwt: { issuer: at.oidc.issuer, jwksUrl: at.oidc.jwksUrl, audience: GATEWAY } },
        credentials: {
          key: 'an-upstream-credentials-key-of-32-bytes-or-more',
          store: 'file',
          file: path.join(tempDir('oauth-sign-in-'), 'c.json'),
          signIn: { clientId: signInClient.client_id, clientSecret: signInClient.client_secret },
        },
        servers: {
          crm: {
            url: at.upstream.url,
            credentials: {
              type: 'oauth',
              clientId: upstreamClient.client_id,
              clientSecret: upstreamClient.client_secret,
            },
          },
        },
      }),
      log: createLogger('silent'),
      server: 'crm',
    });
    ({ gateway, browser, publicUrl } = rig);
    for (const who of ['alice', 'bob', 'carol']) tokens.set(who, await rig.oidc.signCaller(who));
  });

  after(() => rig?.close());

  const whoami = (who: string) => callToolAs(`${gateway.url}/servers/crm/mcp`, tokens.get(who)!, 'whoami');

  /**
   * What a person does with a link: sign in at the issuer as `login` when asked, consent when asked, until a gateway
   * page shows.
   */
  async function openLink(
    link: string,
    login: string,
  ): Promise<{ status: number; title: string; text: string; visited: string[] }> {
    const context = await browser.newContext();
    const page: Page = await context.newPage();
    const visited: string[] = [];
    let status = 0;
    page.on('response', (r) => {
      if (r.request().isNavigationRequest()) {
        visited.push(new URL(r.url()).pathname);
        status = r.status();
      }
    });
    try {
      await page.goto(link);
      for (let step = 0; step < 8 && !page.url().startsWith(publicUrl); step++) {
        const at = page.url();
        if ((await page.locator('input[name="login"]').count()) > 0) {
          await page.locator('input[name="login"]').fill(login);
          await page.locator('input[name="password"]').fill('any');
        }
        await page.locator('button[type="submit"]').first().click();
        await page.waitForURL((url) => url.href !== at);
      }
      await page.waitForLoadState();
      return {
        status,
        title: (await page.locator('h1').textContent()) ?? '',
        text: (await page.locator('body').textContent()) ?? '',
        visited,
      };
    } finally {
      await context.close();
    }
  }

  test(
    'alice opens her own link: she signs in at the issuer as alice, then connects; her call goes out as her ' +
      'account',
    async () => {
      const link: string = (await whoami('alice')).body.error.data.url;
      const done = await openLink(link, 'alice');
      assert.equal(done.title, 'Connected to crm', done.text);
      assert.ok(
        done.visited.includes('/connect/signed-in'),
        `signed in at the gateway first: ${done.visited.join(' → ')}`,
      );
      assert.ok(
        done.visited.indexOf('/connect/signed-in') < done.visited.indexOf('/connect/callback'),
        'the sign-in came before the upstream authorization',
      );
      assert.equal((await whoami('alice')).body.result?.content[0].text, 'you are alice');
    },
  );

  test("bob's link completed by alice is refused with a page naming both, and nothing is connected for bob", async () => {
    const link: string = (await whoami('bob')).body.error.data.url;
    const refused = await openLink(link, 'alice');
    assert.equal(refused.status, 403);
    assert.equal(refused.title, 'This link is not yours');
    assert.match(refused.text, /made for bob, and you signed in as alice\. Nothing was connected\./);
    assert.ok(!refused.visited.includes('/connect/callback'), "the upstream's authorization never started");
    const listed = (await (
      await fetch(`${gateway.url}/connections`, { headers: { authorization: `Bearer ${tokens.get('bob')}` } })
    ).json()) as { connections: unknown[] };
    assert.deepEqual(listed.connections, []);
    assert.equal((await whoami('bob')).body.error?.code, -32042, 'bob still has to connect');
    // The control: bob completing his own new link is connected.
    const own = await openLink((await whoami('bob')).body.error.data.url, 'bob');
    assert.equal(own.title, 'Connected to crm', own.text);
    assert.equal((await whoami('bob')).body.result?.content[0].text, 'you are bob');
  });

  test("with sign-in there is no confirmation to post: a link's id sent to /connect/confirm is refused", async () => {
    const link: string = (await whoami('carol')).body.error.data.url;
    const id = link.slice(link.lastIndexOf('/') + 1);
    const skipped = await fetch(`${publicUrl}/connect/confirm`, {
      method: 'POST',
      body: new URLSearchParams({ link: id }),
      redirect: 'manual',
    });
    assert.equal(skipped.status, 410);
    await skipped.body?.cancel();
  });
});
