// Signing a connect link's person in at auth.jwt's issuer (src/credentials/oauth/sign-in.ts), against a
// small issuer on 127.0.0.1 whose ID tokens each test shapes: what the sign-in request asks, and every way
// its answer is refused — another person, another client's ID token, a replayed nonce, another issuer (RFC
// 9207), no principal claim. An issuer without an authorization endpoint keeps the confirmation page. The
// browser flow against oidc-provider is test/e2e/upstream-oauth-sign-in.test.ts.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { Hono } from 'hono';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { addConnectRoutes } from '../../src/credentials/connect-routes.js';
import type { ConnectPending } from '../../src/credentials/oauth/oauth-client.js';
import { GatewaySignIn, type SignInPending } from '../../src/credentials/oauth/sign-in.js';
import { type CredentialStore, openCredentialStore } from '../../src/credentials/store.js';
import { createLogger } from '../../infra/logger.js';
import { tempDir } from '../temp.js';

const servers: Server[] = [];
const stores: CredentialStore[] = [];
after(async () => {
  for (const server of servers) server.close();
  for (const store of stores) await store.close();
});

const { privateKey, publicKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };

/** An issuer: metadata (or none), JWKS, and a token endpoint answering with whatever ID token `idToken` makes. */
async function issuer(options: { metadata?: boolean; idToken?: (issuer: string) => Promise<string> }) {
  let origin = '';
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    req.resume();
    req.on('end', async () => {
      const p = new URL(req.url!, origin).pathname;
      if (p === '/.well-known/openid-configuration' && options.metadata !== false) {
        return send(200, {
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          jwks_uri: `${origin}/jwks`,
          code_challenge_methods_supported: ['S256'],
        });
      }
      if (p === '/jwks') return send(200, { keys: [jwk] });
      if (p === '/token' && options.idToken)
        return send(200, { access_token: 'at', token_type: 'Bearer', id_token: await options.idToken(origin) });
      send(404, {});
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return origin;
}

const idToken = (claims: JWTPayload, iss: string, aud = 'gw-sign-in') =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(iss)
    .setAudience(aud)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);

async function signInAt(issuerUrl: string, principalClaim = 'sub') {
  const store = await openCredentialStore(
    { key: 'k'.repeat(32), store: 'file', file: path.join(tempDir('sign-in-'), 'c.json') },
    { url: '', keyPrefix: '' },
  );
  stores.push(store);
  const signIn = new GatewaySignIn(
    {
      issuer: issuerUrl,
      principalClaim,
      client: { clientId: 'gw-sign-in', clientSecret: 's' },
      scopes: ['openid'],
      publicUrl: 'https://gw.example.com',
      linkTtlMs: 60_000,
    },
    store,
  );
  return { signIn, store };
}

const link: ConnectPending = { step: 'connect', principal: 'bob', server: 'crm' };
/** The hash of a browser binding (pages/browser-binding.ts): kept with the sign-in's state. */
const BINDING = 'h'.repeat(43);

/** Starts a sign-in for bob's link; returns the authorization request and the state kept for the answer. */
async function started(signIn: GatewaySignIn, store: CredentialStore) {
  const url = new URL((await signIn.start(link, BINDING))!);
  const pending = (await store.takePending<SignInPending>(url.searchParams.get('state')!))!;
  return { url, pending };
}

test(
  'the sign-in request: OIDC code flow with PKCE S256, a nonce, openid, the signed-in callback, and the link ' +
    'principal as login_hint',
  async () => {
    const at = await issuer({});
    const { signIn, store } = await signInAt(at);
    const { url, pending } = await started(signIn, store);
    assert.equal(url.origin + url.pathname, `${at}/authorize`);
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('client_id'), 'gw-sign-in');
    assert.equal(url.searchParams.get('scope'), 'openid');
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('redirect_uri'), 'https://gw.example.com/connect/signed-in');
    assert.equal(url.searchParams.get('nonce'), pending.nonce);
    assert.equal(url.searchParams.get('login_hint'), 'bob');
    assert.deepEqual(pending.link, link);
    assert.equal(pending.binding, BINDING, 'the browser binding is sealed with the sign-in');
  },
);

test("the answer: bob's own ID token lets the link go on; every other answer is refused, saying why", async () => {
  let make: (iss: string, nonce: string) => Promise<string> = async () => '';
  let nonce = '';
  const at = await issuer({ idToken: (iss) => make(iss, nonce) });
  const { signIn, store } = await signInAt(at);
  const answer = async (maker: typeof make, iss?: string) => {
    const { pending } = await started(signIn, store);
    nonce = pending.nonce;
    make = maker;
    return signIn.finish(pending, 'code', iss);
  };
  assert.deepEqual(await answer((iss, n) => idToken({ sub: 'bob', nonce: n }, iss)), { ok: true, link });
  assert.deepEqual(await answer((iss, n) => idToken({ sub: 'alice', nonce: n }, iss)), {
    ok: false,
    reason: 'another person',
    signedInAs: 'alice',
  });
  const otherClient = await answer((iss, n) => idToken({ sub: 'bob', nonce: n }, iss, 'some-other-client'));
  assert.ok(!otherClient.ok && /not accepted/.test(otherClient.reason), JSON.stringify(otherClient));
  const replayed = await answer((iss) => idToken({ sub: 'bob', nonce: 'an-earlier-nonce' }, iss));
  assert.ok(!replayed.ok && /nonce/.test(replayed.reason), JSON.stringify(replayed));
  const mixedUp = await answer((iss, n) => idToken({ sub: 'bob', nonce: n }, iss), 'https://evil.example.com');
  assert.ok(!mixedUp.ok && /RFC 9207/.test(mixedUp.reason), JSON.stringify(mixedUp));
});

test(
  'the principal is read from auth.jwt.principalClaim; ' + 'an ID token without it is refused naming the setting',
  async () => {
    let nonce = '';
    let claims: JWTPayload = {};
    const at = await issuer({ idToken: (iss) => idToken({ ...claims, nonce }, iss) });
    const { signIn, store } = await signInAt(at, 'email');
    for (const [given, ok] of [
      [{ sub: 'x1', email: 'bob' }, true],
      [{ sub: 'bob' }, false],
    ] as const) {
      const { pending } = await started(signIn, store);
      nonce = pending.nonce;
      claims = given;
      const outcome = await signIn.finish(pending, 'code', undefined);
      assert.equal(outcome.ok, ok, JSON.stringify(outcome));
      if (!outcome.ok)
        assert.match(outcome.reason, /no "email" claim \(auth\.jwt\.principalClaim\).*credentials\.signIn\.scopes/);
    }
  },
);

test(
  'an issuer without an authorization endpoint keeps the confirmation page naming principal ' + 'and server',
  async () => {
    const at = await issuer({ metadata: false });
    const { signIn, store } = await signInAt(at);
    assert.equal(await signIn.start(link, BINDING), undefined);
    const app = new Hono();
    addConnectRoutes(app as never, {
      store,
      clients: () => new Map(),
      authenticate: async () => undefined,
      signIn,
      log: createLogger('silent'),
    });
    const id = await store.putPending(link, 60_000);
    const page = await app.request(`/connect/${id}`);
    assert.equal(page.status, 200);
    const text = await page.text();
    assert.match(text, /You are about to connect your <b>crm<\/b> account for <b>bob<\/b>/);
    assert.match(text, /<button type="submit">Connect crm<\/button>/);
  },
);

test('an issuer that is no https URL (a bare name) has nothing fetched and keeps the confirmation page', async () => {
  const fetched: string[] = [];
  const real = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    fetched.push(String(input instanceof Request ? input.url : input));
    return real(input, init);
  };
  try {
    const { signIn } = await signInAt('my-issuer');
    assert.equal(await signIn.start(link, BINDING), undefined);
  } finally {
    globalThis.fetch = real;
  }
  assert.deepEqual(fetched, []);
});
