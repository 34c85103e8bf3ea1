// The connect flow's pages and routes (src/credentials/connect-routes.ts, secret-routes.ts, pages/) on a
// Hono app over a file store, with a stand-in OAuth client and sign-in: a GET never spends a link; every POST
// needs the gateway's own origin; a later step is finished only by the browser that confirmed; bodies are
// capped before parsing; a pasted control character is refused naming the field; an operator's error shows a
// reference, not the message. The same in a real browser against oidc-provider:
// test/e2e/upstream-oauth-sign-in.test.ts and upstream-oauth.test.ts.
import assert from 'node:assert/strict';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { Hono } from 'hono';
import { createLogger } from '../../infra/logger.js';
import { withoutCapabilityLinks } from '../../protocol/capability-links.js';
import { addConnectRoutes } from '../../src/credentials/connect-routes.js';
import type { AuthorizationPending, ConnectPending } from '../../src/credentials/oauth/oauth-client.js';
import { BrowserBinding } from '../../src/credentials/pages/browser-binding.js';
import type { SecretFormPending } from '../../src/credentials/pages/secret-form.js';
import { addSecretRoutes } from '../../src/credentials/secret-routes.js';
import { type CredentialStore, openCredentialStore } from '../../src/credentials/store.js';
import type { SecretPending } from '../../src/credentials/record.js';
import { tempDir } from '../temp.js';

const PUBLIC = 'http://127.0.0.1:8080';
const SAME = { origin: PUBLIC };
const stores: CredentialStore[] = [];
after(async () => {
  for (const store of stores) await store.close();
});

interface Stand {
  app: Hono;
  store: CredentialStore;
  /** The browser bindings the stand-in client and sign-in were given. */
  bindings: string[];
  logged: string[];
  failWith?: Error;
}

/** The pages over a fresh store; `signIn`: a stand-in sign-in at idp.example.com. */
async function stand(options: { signIn?: boolean; publicUrl?: string } = {}): Promise<Stand> {
  const store = await openCredentialStore(
    { key: 'k'.repeat(32), store: 'file', file: path.join(tempDir('connect-pages-'), 'c.json') },
    { url: 'redis://unused', keyPrefix: 'x:' },
  );
  stores.push(store);
  const logged: string[] = [];
  const log = createLogger(
    'debug',
    new Writable({
      write(chunk, _encoding, done) {
        logged.push(String(chunk));
        done();
      },
    }),
  );
  const app = new Hono();
  const self: Stand = { app, store, bindings: [], logged };
  const client = {
    destination: async (scopes?: string[]) => ({ host: 'as.example.com', scopes: scopes ?? ['crm.read'] }),
    authorizationUrl: async (_principal: string, _scopes: unknown, binding: string) => {
      if (self.failWith) throw self.failWith;
      self.bindings.push(binding);
      return 'https://as.example.com/authorize?state=s';
    },
    complete: async () => {},
  };
  const signIn = options.signIn
    ? {
        issuer: 'https://idp.example.com',
        start: async (_link: unknown, binding: string) => {
          self.bindings.push(binding);
          return 'https://idp.example.com/authorize?state=t';
        },
      }
    : undefined;
  const publicUrl = options.publicUrl ?? PUBLIC;
  // alice's usual credentials, for /connections.
  const authenticate = async (header: string | undefined) => (header === 'Bearer alice-key' ? 'alice' : undefined);
  const common = { store, authenticate, publicUrl, signIn: signIn as never, log };
  addConnectRoutes(app as never, {
    ...common,
    clients: () => new Map([['crm', client as never]]),
    displayName: (server) => (server === 'crm' ? 'CRM Suite' : server),
  });
  addSecretRoutes(app as never, {
    ...common,
    secretsOf: (server) => (server === 'vault' ? { VAULT_TOKEN: { prompt: 'Your vault token' } } : undefined),
    linkTtlMs: 60_000,
    connections: false,
    displayName: (server) => server,
  });
  return self;
}

const connectLink = (store: CredentialStore) =>
  store.putPending({ step: 'connect', principal: 'alice', server: 'crm' } satisfies ConnectPending, 60_000);
const pasteLink = (store: CredentialStore) =>
  store.putPending({ step: 'secret', principal: 'alice', server: 'vault' } satisfies SecretPending, 60_000);
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const post = (app: Hono, url: string, body: string, headers: Record<string, string> = SAME) =>
  app.request(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
/** The cookie a response set, as a browser sends it back. */
const cookieOf = (response: Response) => response.headers.get('set-cookie')?.split(';')[0] ?? '';

test('a GET shows what a connect link is for and spends nothing: fetched twice, its button still works', async () => {
  const { app, store, bindings } = await stand();
  const id = await connectLink(store);
  for (const time of ['first', 'second']) {
    const page = await app.request(`/connect/${id}`);
    assert.equal(page.status, 200, time);
    assert.match(page.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    const text = await page.text();
    assert.match(text, /connect your <b>CRM Suite<\/b> account \(<code>crm<\/code>\) for <b>alice<\/b>/);
    assert.match(text, /to <b>as\.example\.com<\/b>/, 'where the person will be sent');
    assert.match(text, /<code>crm\.read<\/code>/, 'the scopes asked');
    assert.match(text, /<button type="submit">Connect CRM Suite<\/button>/);
  }
  const confirmed = await post(app, '/connect/confirm', form({ link: id }));
  assert.equal(confirmed.status, 303);
  assert.equal(confirmed.headers.get('location'), 'https://as.example.com/authorize?state=s');
  const cookie = confirmed.headers.get('set-cookie')!;
  assert.match(cookie, /^mcp-gateway-connect=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
  assert.equal(bindings[0], new BrowserBinding(PUBLIC).bind(cookieOf(confirmed)).hash, 'the hash is sealed');
  assert.equal((await post(app, '/connect/confirm', form({ link: id }))).status, 410, 'the POST spent it');
  assert.equal((await app.request(`/connect/${id}`)).status, 410);
});

test('an https publicUrl gets a __Host- cookie with Secure; a browser holding one keeps it', async () => {
  const { app, store, bindings } = await stand({ publicUrl: 'https://gw.example.com' });
  const origin = { origin: 'https://gw.example.com' };
  const first = await post(app, '/connect/confirm', form({ link: await connectLink(store) }), origin);
  assert.match(
    first.headers.get('set-cookie')!,
    /^__Host-mcp-gateway-connect=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
  );
  const again = await post(app, '/connect/confirm', form({ link: await connectLink(store) }), {
    ...origin,
    cookie: cookieOf(first),
  });
  assert.equal(again.status, 303);
  assert.equal(again.headers.get('set-cookie'), null, 'two links at once in one browser both finish');
  assert.equal(bindings[0], bindings[1]);
});

test('a POST from another origin or none, or without a same-origin Sec-Fetch-Site, is refused', async () => {
  const { app, store } = await stand();
  const id = await connectLink(store);
  const refusals: Record<string, string>[] = [
    { origin: 'https://evil.example.com' },
    { origin: 'null' },
    { origin: `${PUBLIC}, https://evil.example.com` },
    {},
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site' },
  ];
  for (const headers of refusals) {
    for (const url of ['/connect/confirm', '/secrets/confirm', '/secrets/save']) {
      const refused = await post(app, url, form({ link: id }), headers);
      assert.equal(refused.status, 403, `${url} ${JSON.stringify(headers)}`);
      assert.match(await refused.text(), /refused and nothing happened/);
      assert.equal(refused.headers.get('x-frame-options'), 'DENY');
    }
  }
  // The link is whole after all that; a client that sends no Origin but says same-origin gets through.
  const accepted = await post(app, '/connect/confirm', form({ link: id }), { 'sec-fetch-site': 'same-origin' });
  assert.equal(accepted.status, 303);
});

test('the callback binds nothing in a browser without the cookie of the one that confirmed, and says why', async () => {
  const { app, store } = await stand();
  const confirmed = await post(app, '/connect/confirm', form({ link: await connectLink(store) }));
  const alice = cookieOf(confirmed);
  const bob = cookieOf(await post(app, '/connect/confirm', form({ link: await connectLink(store) })));
  const pending: AuthorizationPending = {
    step: 'authorize',
    principal: 'alice',
    server: 'crm',
    verifier: 'v',
    issuer: 'https://as.example.com',
    issParameterSupported: false,
    tokenEndpoint: 'https://as.example.com/token',
    resource: 'https://crm.example.com/mcp',
    client: { clientId: 'gw', authMethod: 'none' },
    redirectUri: `${PUBLIC}/connect/callback`,
    binding: new BrowserBinding(PUBLIC).bind(alice).hash,
  };
  for (const cookie of [undefined, bob]) {
    const state = await store.putPending(pending, 60_000);
    const answer = await app.request(`/connect/callback?state=${state}&code=c`, {
      headers: cookie ? { cookie } : {},
    });
    assert.equal(answer.status, 403);
    const text = await answer.text();
    assert.match(text, /started in another browser/);
    assert.match(text, /nothing was connected/);
  }
  const state = await store.putPending(pending, 60_000);
  const own = await app.request(`/connect/callback?state=${state}&code=c`, { headers: { cookie: alice } });
  assert.equal(own.status, 200);
  assert.match(await own.text(), /Connected to CRM Suite/);
});

test("an operator's error shows a reference the person can quote; the message stays in the log", async () => {
  const s = await stand();
  s.failWith = new Error('servers.crm.credentials.clientId: the authorization server offers no registration');
  const answer = await post(s.app, '/connect/confirm', form({ link: await connectLink(s.store) }));
  assert.equal(answer.status, 502);
  const text = await answer.text();
  assert.ok(!text.includes('clientId'), 'the operator message is not shown');
  const reference = /<code>([0-9A-F]{8})<\/code>/.exec(text)?.[1];
  assert.ok(reference, text);
  const line = s.logged.find((entry) => entry.includes(reference));
  assert.ok(line?.includes('offers no registration'), 'the log has the message with the reference');
});

test('bodies are capped before parsing: 4 KiB to confirm, 64 KiB to save, declared or streamed', async () => {
  const { app, store } = await stand();
  const id = await connectLink(store);
  const big = (bytes: number) => form({ link: id, pad: 'x'.repeat(bytes) });
  const tooLarge = await post(app, '/connect/confirm', big(5 * 1024));
  assert.equal(tooLarge.status, 413);
  assert.match(await tooLarge.text(), /more than 4 KiB/);
  assert.equal((await post(app, '/secrets/save', big(65 * 1024))).status, 413);
  const streamed = new ReadableStream({
    pull(controller) {
      controller.enqueue(new TextEncoder().encode('x'.repeat(16 * 1024)));
    },
  });
  const endless = await app.request('/secrets/save', {
    method: 'POST',
    body: streamed,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'transfer-encoding': 'chunked', ...SAME },
    duplex: 'half',
  } as RequestInit);
  assert.equal(endless.status, 413, 'a body without a length is cut off at the cap');
  // Under the cap goes through (a multi-line key's worth of paste), and the link is still whole.
  const paste = await pasteLink(store);
  const pem = `-----BEGIN KEY-----\n${'A'.repeat(64)}\n`.repeat(500);
  const saved = await post(app, '/secrets/save', form({ link: paste, 'value:VAULT_TOKEN': pem }));
  assert.equal(saved.status, 200, await saved.text());
  assert.equal((await post(app, '/connect/confirm', form({ link: id }))).status, 303);
});

test('a paste link: GET twice shows the form; a NUL is refused naming the field and spends nothing', async () => {
  const { app, store } = await stand();
  const id = await pasteLink(store);
  for (let i = 0; i < 2; i++) {
    const page = await app.request(`/secrets/${id}`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    assert.match(await page.text(), /name="value:VAULT_TOKEN"/);
  }
  for (const bad of ['zq9\u0000en', 'zq9\u001ben', 'zq9\u007fen']) {
    const refused = await post(app, '/secrets/save', form({ link: id, 'value:VAULT_TOKEN': bad }));
    assert.equal(refused.status, 400);
    const text = await refused.text();
    assert.match(text, /&#34;Your vault token&#34; \(VAULT_TOKEN\) holds a control character/);
    assert.ok(!text.includes('zq9'), 'the value is not quoted');
  }
  const saved = await post(app, '/secrets/save', form({ link: id, 'value:VAULT_TOKEN': 'tok\ten\r\n' }));
  assert.equal(saved.status, 200);
  const record = await store.get('alice', 'vault');
  assert.deepEqual(record?.kind === 'secret' && record.values, { VAULT_TOKEN: 'tok\ten' });
  assert.equal((await post(app, '/secrets/save', form({ link: id, 'value:VAULT_TOKEN': 'again' }))).status, 410);
});

test('with sign-in, a paste link goes through it; its form saves only from the confirming browser', async () => {
  const { app, store, bindings } = await stand({ signIn: true });
  const id = await pasteLink(store);
  const page = await (await app.request(`/secrets/${id}`)).text();
  assert.match(page, /first sign in at <b>idp\.example\.com<\/b>/);
  assert.ok(!page.includes('name="value:'), 'no form before the sign-in');
  const skipped = await post(app, '/secrets/save', form({ link: id, 'value:VAULT_TOKEN': 'tok' }));
  assert.equal(skipped.status, 410, "the link's own id cannot skip the sign-in");
  const confirmed = await post(app, '/secrets/confirm', form({ link: id }));
  assert.equal(confirmed.status, 303);
  assert.equal(confirmed.headers.get('location'), 'https://idp.example.com/authorize?state=t');
  const mine = cookieOf(confirmed);
  assert.equal(bindings[0], new BrowserBinding(PUBLIC).bind(mine).hash);
  // What /connect/signed-in makes once the person signed in: the form's own id, bound to that browser.
  const pending: SecretFormPending = {
    step: 'secret-form',
    link: { step: 'secret', principal: 'alice', server: 'vault' },
    binding: bindings[0]!,
  };
  const formId = await store.putPending(pending, 60_000);
  const other = 'mcp-gateway-connect=' + 'B'.repeat(43);
  assert.equal((await app.request(`/secrets/form/${formId}`, { headers: { cookie: other } })).status, 403);
  assert.match(
    await (await app.request(`/secrets/form/${formId}`, { headers: { cookie: mine } })).text(),
    /VAULT_TOKEN/,
  );
  const elsewhere = await post(app, '/secrets/save', form({ link: formId, 'value:VAULT_TOKEN': 'tok' }), {
    ...SAME,
    cookie: other,
  });
  assert.equal(elsewhere.status, 403);
  assert.equal(await store.get('alice', 'vault'), undefined, 'nothing saved from another browser');
  const saved = await post(app, '/secrets/save', form({ link: formId, 'value:VAULT_TOKEN': 'tok' }), {
    ...SAME,
    cookie: mine,
  });
  assert.equal(saved.status, 200);
});

test('the connections page: handed out by GET /connections, opened by a POST, revoking from its browser', async () => {
  const { app, store } = await stand();
  for (const server of ['vault', 'crm'])
    await store.put('alice', server, { kind: 'secret', values: { A: 'zq9-value' }, connectedAt: Date.now() });
  const listed = (await (
    await app.request('/connections', { headers: { authorization: 'Bearer alice-key' } })
  ).json()) as {
    page: string;
  };
  assert.ok(listed.page.startsWith(`${PUBLIC}/connections/page/`), listed.page);
  const pagePath = listed.page.slice(PUBLIC.length);
  for (let i = 0; i < 2; i++) assert.match(await (await app.request(pagePath)).text(), /Show my connections/);
  const id = pagePath.slice(pagePath.lastIndexOf('/') + 1);
  assert.equal(
    (await post(app, '/connections/open', form({ link: id }), { origin: 'https://evil.example.com' })).status,
    403,
  );
  const opened = await post(app, '/connections/open', form({ link: id }));
  assert.equal(opened.status, 303);
  assert.equal((await post(app, '/connections/open', form({ link: id }))).status, 410, 'the link is spent');
  const view = opened.headers.get('location')!;
  const mine = { cookie: cookieOf(opened) };
  const other = { cookie: `mcp-gateway-connect=${'C'.repeat(43)}` };
  assert.equal((await app.request(view)).status, 403, 'no cookie: not this browser');
  const listPage = await (await app.request(view, { headers: mine })).text();
  assert.match(listPage, /Revoke CRM Suite/);
  assert.match(listPage, /Revoke vault/);
  assert.ok(!listPage.includes('zq9'), 'no value on the page');
  const listId = view.slice(view.lastIndexOf('/') + 1);
  const revoke = form({ list: listId, server: 'vault' });
  assert.equal((await post(app, '/connections/revoke', revoke, { ...SAME, ...other })).status, 403);
  assert.equal(
    (await post(app, '/connections/revoke', revoke, { origin: 'https://evil.example.com', ...mine })).status,
    403,
  );
  assert.ok(await store.get('alice', 'vault'), 'still connected after the refused attempts');
  const revoked = await post(app, '/connections/revoke', revoke, { ...SAME, ...mine });
  assert.equal(revoked.status, 303);
  assert.equal(await store.get('alice', 'vault'), undefined, 'revoked');
  const after = await (await app.request(view, { headers: mine })).text();
  assert.ok(!after.includes('Revoke vault') && after.includes('Revoke CRM Suite'), after);
});

test('link ids are taken out of text bound for logs and traces; short route names stay', () => {
  const id = 'r2t0va3wO4fkE-YSFL-j6-UNl7ByuuX9d-m1ueMSVxE';
  const said = `Connect your crm account: open https://gw/connect/${id} (single use), or https://gw/secrets/${id}`;
  assert.equal(
    withoutCapabilityLinks(said),
    'Connect your crm account: open https://gw/connect/… (single use), or https://gw/secrets/…',
  );
  for (const path of [`/secrets/form/${id}`, `/connections/page/${id}`, `/connections/view/${id}`])
    assert.ok(!withoutCapabilityLinks(path).includes(id), path);
  assert.equal(withoutCapabilityLinks('/connect/callback'), '/connect/callback');
});
