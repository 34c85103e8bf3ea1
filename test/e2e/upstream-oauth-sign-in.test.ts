// The person completing a connect link must be the principal it was made for (issue 33; the spec's URL-mode
// elicitation security). With auth.jwt, whose issuer (oidc-provider here) has an authorization endpoint, the
// link first signs the person in at that issuer (OIDC code + PKCE) and the ID token's `sub` must be the
// link's principal. Headless Chromium plays the people: alice completes her own link; bob's link, forwarded
// to alice and completed by her, is refused with a page saying so, and nothing is connected for bob.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../infra/logger.js';
import { startIdentityServer, type IdentityServer } from '../fixtures/identity-server.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { everything } from './harness.js';
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
          // A paste link goes through the same sign-in (issue 45 item 1).
          vault: { ...everything, perCaller: true, secrets: { VAULT_TOKEN: { prompt: 'Your vault token' } } },
        },
      }),
      log: createLogger('silent'),
      server: 'crm',
    });
    ({ gateway, browser, publicUrl } = rig);
    for (const who of ['alice', 'bob', 'carol']) tokens.set(who, await rig.oidc.signCaller(who));
  });

  after(() => rig?.close());

  const revoke = (who: string) =>
    fetch(`${gateway.url}/connections/crm`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${tokens.get(who)}` },
    });
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
      await confirmOnGatewayPage(page, link);
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

  test(
    "bob's link completed by alice is refused with a page naming both, " + 'and nothing is connected for bob',
    async () => {
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
    },
  );

  /**
   * Opens `link` in a fresh browser, confirms it and signs in as `login` until the browser is sent to the
   * authorization endpoint as `clientId` (the sign-in's or the upstream's client); returns that URL, which this
   * browser goes no further with (as if its person forwarded it).
   */
  async function startAndCatch(link: string, login: string, clientId: string): Promise<string> {
    const context = await browser.newContext();
    const page = await context.newPage();
    let caught: string | undefined;
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.searchParams.get('client_id') === clientId && url.searchParams.has('code_challenge')) caught ??= url.href;
    });
    try {
      await page.goto(link);
      await page.getByRole('button', { name: /Connect crm/ }).click();
      for (let turn = 0; turn < 8 && caught === undefined; turn++) {
        await page.waitForURL((url) => !url.pathname.startsWith('/connect/'));
        await page.waitForLoadState();
        if (caught !== undefined) break;
        if ((await page.locator('input[name="login"]').count()) > 0) {
          await page.locator('input[name="login"]').fill(login);
          await page.locator('input[name="password"]').fill('any');
        }
        const at = page.url();
        await page.locator('button[type="submit"]').first().click();
        await page.waitForURL((url) => url.href !== at);
      }
      assert.ok(caught, `the browser was never sent to the authorization endpoint as ${clientId}`);
      return caught;
    } finally {
      await context.close();
    }
  }

  test("issue 45 item 1: bob's browser finishing alice's authorization URL binds nothing and says why", async () => {
    assert.equal((await revoke('alice')).status, 200, 'connected by the first test');
    const fresh: string = (await whoami('alice')).body.error.data.url;
    // Alice confirms and signs in; the upstream's authorization URL is sent to bob instead of followed.
    const forwarded = await startAndCatch(fresh, 'alice', upstreamClient.client_id);
    const bobs = await openLink(forwarded, 'bob');
    assert.equal(bobs.status, 403, bobs.text);
    assert.equal(bobs.title, 'Not connected to crm');
    assert.match(bobs.text, /started in another browser/);
    assert.equal((await whoami('alice')).body.error?.code, -32042, "nothing connected for alice, bob's account least");
  });

  test('a sign-in started in one browser cannot be finished in another, even as the right person', async () => {
    const link: string = (await whoami('alice')).body.error.data.url;
    const forwarded = await startAndCatch(link, 'alice', signInClient.client_id);
    const elsewhere = await openLink(forwarded, 'alice');
    assert.equal(elsewhere.status, 403, elsewhere.text);
    assert.match(elsewhere.text, /started in another browser/);
    assert.ok(!elsewhere.visited.includes('/connect/callback'), "the upstream's authorization never started");
    assert.equal((await whoami('alice')).body.error?.code, -32042);
  });

  test("a page elsewhere submitting a link's confirmation is refused; the link stays whole", async () => {
    const link: string = (await whoami('carol')).body.error.data.url;
    const id = link.slice(link.lastIndexOf('/') + 1);
    const elsewhere = createServer((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<form method="post" action="${publicUrl}/connect/confirm"><input type="hidden" name="link" value="${id}">` +
            '</form><script>document.forms[0].submit()</script>',
        ),
    );
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const answered = page.waitForResponse((r) => r.url() === `${publicUrl}/connect/confirm`);
      await page.goto(`http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/`);
      const refused = await answered;
      assert.equal(refused.status(), 403);
      assert.match(await refused.text(), /sent from another site/);
    } finally {
      await context.close();
      elsewhere.close();
    }
    const own = await openLink(link, 'carol');
    assert.equal(own.title, 'Connected to crm', own.text);
  });

  test('a paste link with sign-in: the page, the sign-in as its principal, then the form, saved', async () => {
    const asked = await callToolAs(`${gateway.url}/servers/vault/mcp`, tokens.get('carol')!, 'get-env');
    const link: string = asked.body.error?.data?.url;
    assert.ok(link?.startsWith(`${publicUrl}/secrets/`), JSON.stringify(asked.body));
    assert.equal((await fetch(link)).status, 200, 'a preview spends nothing');
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(link);
      await page.getByRole('button', { name: 'Continue to sign in' }).click();
      for (let turn = 0; turn < 8; turn++) {
        await page.waitForURL((url) => !url.href.startsWith(link));
        await page.waitForLoadState();
        if (page.url().startsWith(`${publicUrl}/secrets/form/`)) break;
        if ((await page.locator('input[name="login"]').count()) > 0) {
          await page.locator('input[name="login"]').fill('carol');
          await page.locator('input[name="password"]').fill('any');
        }
        const at = page.url();
        await page.locator('button[type="submit"]').first().click();
        await page.waitForURL((url) => url.href !== at);
      }
      assert.ok(page.url().startsWith(`${publicUrl}/secrets/form/`), page.url());
      await page.fill('input[type=password]', 'carol-vault-token-0123');
      await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      assert.equal(await page.textContent('h1'), 'Saved for vault');
    } finally {
      await context.close();
    }
    const listed = (await (
      await fetch(`${gateway.url}/connections`, { headers: { authorization: `Bearer ${tokens.get('carol')}` } })
    ).json()) as { connections: { server: string }[] };
    assert.ok(
      listed.connections.some((c) => c.server === 'vault'),
      JSON.stringify(listed),
    );
  });
});

/** Presses the gateway's own confirmation button on a link's page (a GET of the link spends nothing). */
async function confirmOnGatewayPage(page: Page, link: string): Promise<void> {
  if (!page.url().startsWith(link)) return;
  await page.getByRole('button', { name: /Connect crm/ }).click();
  await page.waitForURL((url) => url.href !== link);
}
