// servers.<name>.credentials type: oauth (issue 33), end to end: oidc-provider as the upstream's
// authorization server (authorization code + PKCE, refresh tokens, resource indicators, JWT access
// tokens), an SDK v2 server that accepts only tokens for its own URL and says who called, and headless
// Chromium doing what a person does with the connect link: confirm, sign in at the authorization server,
// consent, land on "connected". Two principals connect two different upstream accounts.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { RunningGateway } from '../../src/gateway.js';
import { startIdentityServer, type IdentityServer } from '../fixtures/identity-server.js';
import type { Oidc } from '../fixtures/oidc.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { post, request, send } from './harness.js';
import { callToolAs, startOAuthRig, type OAuthRig } from './oauth-rig.js';
import { writtenLog } from '../recording-log.js';

const browserNeed = await chromium('the connect flow in headless Chromium');
const KEYS: Record<string, string> = { alice: 'alice-api-key-0123456789abcdef', bob: 'bob-api-key-0123456789abcdefgh' };
const CREDENTIALS_KEY = 'an-upstream-credentials-key-of-32-bytes-or-more';

describe('oauth: each caller connects their own upstream account', { skip: browserNeed.skip }, () => {
  let rig: OAuthRig<IdentityServer>;
  let oidc: Oidc;
  let upstream: IdentityServer;
  let gateway: RunningGateway;
  let browser: Browser;
  let publicUrl: string;
  const written = writtenLog('debug');
  const storeFile = path.join(tempDir('upstream-oauth-'), 'credentials.json');
  const client = { client_id: 'gw-oauth', client_secret: 'gw-oauth-secret-0123456789' };

  before(async () => {
    browserNeed.check();
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client,
      upstream: startIdentityServer,
      config: (at) => ({
        log: { level: 'debug' },
        auth: { apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })) },
        credentials: { key: CREDENTIALS_KEY, store: 'file', file: storeFile },
        servers: {
          crm: {
            url: at.upstream.url,
            credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret },
          },
        },
      }),
      log: written.logger,
      server: 'crm',
    });
    ({ oidc, upstream, gateway, browser, publicUrl } = rig);
  });

  after(() => rig?.close());

  const whoami = (who: string, extra: Record<string, unknown> = {}) =>
    callToolAs(`${gateway.url}/servers/crm/mcp`, KEYS[who]!, 'whoami', extra);

  const connectInBrowser = (link: string, login: string) => rig.connectInBrowser(link, login);

  test(
    'a caller without a token gets a link; ' + 'after connecting in the browser the retry goes out as their account',
    async () => {
      const first = await whoami('alice');
      assert.ok('error' in first.body, JSON.stringify(first.body));
      const link: string = first.body.error.data.url;
      assert.ok(link.startsWith(`${publicUrl}/connect/`), link);
      assert.ok(first.body.error.message.includes(link));
      assert.equal(await connectInBrowser(link, 'alice-at-crm'), 'Connected to crm');
      const retry = await whoami('alice');
      assert.equal(retry.body.result?.content[0].text, 'you are alice-at-crm', JSON.stringify(retry.body));
      // The token it sent was issued for the upstream's URL (resource indicator), as a JWT.
      assert.equal((await oidc.verify(upstream.tokens.at(-1)!, upstream.url)).sub, 'alice-at-crm');
    },
  );

  test('bob connects his own account; each goes out as their own', async () => {
    const link: string = (await whoami('bob')).body.error.data.url;
    assert.equal(await connectInBrowser(link, 'bob-at-crm'), 'Connected to crm');
    assert.equal((await whoami('bob')).body.result.content[0].text, 'you are bob-at-crm');
    assert.equal((await whoami('alice')).body.result.content[0].text, 'you are alice-at-crm');
  });

  test(
    'a client that declared elicitation.url gets input_required with a URL-mode elicitation; its retry with the ' +
      'same requestState goes out as her account',
    async () => {
      const meta = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } };
      const body = request('tools/call', { name: 'whoami', arguments: {}, _meta: meta });
      await post(`${gateway.url}/connections/crm`, '', { authorization: `Bearer ${KEYS.alice}` }, { method: 'DELETE' });
      const answer = await send(`${gateway.url}/servers/crm/mcp`, body, { authorization: `Bearer ${KEYS.alice}` });
      assert.equal(answer.body.result?.resultType, 'input_required', JSON.stringify(answer.body));
      const [elicitation] = Object.values(answer.body.result.inputRequests) as {
        method: string;
        params: { mode: string; url: string };
      }[];
      assert.equal(elicitation?.method, 'elicitation/create');
      assert.equal(elicitation?.params.mode, 'url');
      assert.ok(elicitation?.params.url.startsWith(`${publicUrl}/connect/`));
      // The person opens it and connects; the client retries with the same requestState and its answer.
      assert.equal(await connectInBrowser(elicitation!.params.url, 'alice-at-crm'), 'Connected to crm');
      const [key] = Object.keys(answer.body.result.inputRequests);
      const retry = request('tools/call', {
        name: 'whoami',
        arguments: {},
        _meta: meta,
        requestState: answer.body.result.requestState,
        inputResponses: { [key!]: { action: 'accept' } },
      });
      const done = await send(`${gateway.url}/servers/crm/mcp`, retry, { authorization: `Bearer ${KEYS.alice}` });
      assert.equal(done.body.result?.content?.[0].text, 'you are alice-at-crm', JSON.stringify(done.body));
      // Revoked again: the next call asks her to connect.
      const revoked = await fetch(`${gateway.url}/connections/crm`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${KEYS.alice}` },
      });
      assert.equal(revoked.status, 200);
      assert.equal((await whoami('alice')).body.error?.code, -32042);
    },
  );

  test('a link fetched twice by GET (a preview, a scanner) still completes; confirmed, it is spent', async () => {
    const link: string = (await whoami('alice')).body.error.data.url;
    for (const time of ['preview', 'scanner']) assert.equal((await fetch(link)).status, 200, time);
    assert.equal(await connectInBrowser(link, 'alice-at-crm'), 'Connected to crm');
    assert.equal((await whoami('alice')).body.result?.content[0].text, 'you are alice-at-crm');
    assert.equal((await fetch(link)).status, 410, 'spent by the confirming POST');
    const revoked = await fetch(`${gateway.url}/connections/crm`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEYS.alice}` },
    });
    assert.equal(revoked.status, 200);
  });

  test('a replayed, made-up or foreign link is refused', async () => {
    const link: string = (await whoami('alice')).body.error.data.url;
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      assert.equal((await page.goto(link))?.status(), 200);
      assert.equal((await page.goto(link))?.status(), 200, 'a GET spends nothing');
      await page.getByRole('button', { name: /Connect crm/ }).click();
      await page.waitForURL((url) => !url.href.startsWith(link));
      assert.equal((await page.goto(link))?.status(), 410, 'replayed after the confirming POST');
      assert.equal((await page.goto(`${publicUrl}/connect/${'A'.repeat(43)}`))?.status(), 410, 'made up');
      assert.equal(
        (await page.goto(`${publicUrl}/connect/callback?state=${'B'.repeat(43)}&code=x`))?.status(),
        400,
        'a callback nobody started',
      );
    } finally {
      await context.close();
    }
  });

  test('callers list and revoke only their own connections; no token text anywhere', async () => {
    const listed = await fetch(`${gateway.url}/connections`, { headers: { authorization: `Bearer ${KEYS.bob}` } });
    const json = (await listed.json()) as { principal: string; connections: { server: string }[] };
    assert.equal(json.principal, 'bob');
    assert.deepEqual(
      json.connections.map((c) => c.server),
      ['crm'],
    );
    const text = JSON.stringify(json);
    for (const token of upstream.tokens) assert.ok(!text.includes(token));
    assert.equal((await fetch(`${gateway.url}/connections`)).status, 401);
    const all = written.text();
    for (const token of upstream.tokens) assert.ok(!all.includes(token), 'a token reached the log');
    assert.ok(!all.includes(client.client_secret));
  });

  test('a restarted gateway uses the stored token', async () => {
    gateway = await rig.restartGateway();
    assert.equal((await whoami('bob')).body.result?.content[0].text, 'you are bob-at-crm');
  });

  test('an expired access token is refreshed without the user', async () => {
    // Tokens from now on are inside the refresh margin at once (a lifetime up to its 2 s minimum: token-lifetime.ts),
    // so each call refreshes first. Not 1 s: a JWT's exp is in whole seconds, so a 1 s token could reach the upstream
    // already expired when its second ran out on the way (a CI run under load: refused, refreshed, refused again).
    oidc.setAccessTokenTtl(2);
    try {
      const link: string = (await whoami('alice')).body.error.data.url;
      assert.equal(await connectInBrowser(link, 'alice-at-crm'), 'Connected to crm');
      const before = upstream.tokens.length;
      assert.equal((await whoami('alice')).body.result?.content[0].text, 'you are alice-at-crm');
      const second = upstream.tokens.slice(before);
      assert.equal((await whoami('alice')).body.result?.content[0].text, 'you are alice-at-crm');
      const third = upstream.tokens.slice(before + second.length);
      assert.notEqual(second[0], third[0], 'a fresh token each time: refreshed, not connected again');
    } finally {
      oidc.setAccessTokenTtl(3600);
    }
  });
});
