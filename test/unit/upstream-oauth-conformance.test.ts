// The client side of the MCP authorization spec (basic/authorization, 2026-07-28), requirement by
// requirement, against a small resource + authorization server on 127.0.0.1 that each test shapes: the
// well-known variants in the spec's order, scope selection, client identity in the spec's order
// (pre-registration, Client ID Metadata Document, dynamic registration), token endpoint authentication as
// the server offers, `resource` (RFC 8707) on every request and a token never sent to another resource,
// refresh and offline_access, the RFC 9207 table, PKCE S256. upstream-oauth-client.test.ts has the first
// cases of several of these; the e2e tests run the whole flow against oidc-provider.
import { BrowserBinding } from '../../src/credentials/pages/browser-binding.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { Hono } from 'hono';
import { addConnectRoutes } from '../../src/credentials/connect-routes.js';
import { discover } from '../../src/credentials/oauth/discovery.js';
import { type AuthorizationPending, issuerProblem, OAuthClient } from '../../src/credentials/oauth/oauth-client.js';
import type { OAuthRecord } from '../../src/credentials/record.js';
import { type CredentialStore, openCredentialStore } from '../../src/credentials/store.js';
import type { OAuthCredentials } from '../../src/config/credentials.js';
import { createLogger } from '../../infra/logger.js';
import { tempDir } from '../temp.js';

const servers: Server[] = [];
const stores: CredentialStore[] = [];
after(async () => {
  for (const server of servers) server.close();
  for (const store of stores) await store.close();
});

interface Seen {
  method: string;
  path: string;
  authorization?: string | undefined;
  body: string;
}

/** One origin that is both the MCP server (at /mcp) and its authorization server; each test shapes its answers. */
async function world(shape: {
  challenge?: (origin: string) => string;
  /** Path → JSON answered with 200; everything else is 404 (the token and registration endpoints aside). */
  documents: (origin: string) => Record<string, Record<string, unknown>>;
}) {
  const seen: Seen[] = [];
  let origin = '';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const p = new URL(req.url!, origin).pathname;
      seen.push({ method: req.method!, path: p, authorization: req.headers.authorization, body });
      const send = (status: number, json: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      if (req.method === 'POST' && p === '/mcp')
        return res.writeHead(401, { 'www-authenticate': shape.challenge?.(origin) ?? 'Bearer' }).end();
      if (req.method === 'POST' && p === '/token')
        return send(200, {
          access_token: `at-${seen.length}`,
          token_type: 'Bearer',
          expires_in: 3600,
          refresh_token: 'rt-next',
        });
      if (req.method === 'POST' && p === '/register') return send(201, { client_id: `registered-${seen.length}` });
      const document = shape.documents(origin)[p];
      if (req.method === 'GET' && document) return send(200, document);
      send(404, {});
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, url: `${origin}/mcp`, seen, paths: () => seen.map((s) => `${s.method} ${s.path}`) };
}

const prm = (origin: string, extra: Record<string, unknown> = {}) => ({
  resource: `${origin}/mcp`,
  authorization_servers: [origin],
  ...extra,
});
const asMetadata = (origin: string, extra: Record<string, unknown> = {}) => ({
  issuer: origin,
  authorization_endpoint: `${origin}/authorize`,
  token_endpoint: `${origin}/token`,
  registration_endpoint: `${origin}/register`,
  code_challenge_methods_supported: ['S256'],
  ...extra,
});

/** A world with the path-inserted PRM and RFC 8414 metadata; extras go into each. */
const plainWorld = (
  extra: { prm?: Record<string, unknown>; as?: Record<string, unknown>; challenge?: (origin: string) => string } = {},
) =>
  world({
    challenge: extra.challenge,
    documents: (o) => ({
      '/.well-known/oauth-protected-resource/mcp': prm(o, extra.prm),
      '/.well-known/oauth-authorization-server': asMetadata(o, extra.as),
    }),
  });

async function clientFor(url: string, settings: Partial<OAuthCredentials> = {}, publicUrl = 'http://127.0.0.1:9') {
  const store = await openCredentialStore(
    { key: 'k'.repeat(32), store: 'file', file: path.join(tempDir('oauth-conformance-'), 'c.json') },
    { url: '', keyPrefix: '' },
  );
  stores.push(store);
  const client = new OAuthClient({
    server: 'crm',
    url,
    settings: { type: 'oauth', scopes: [], ...settings },
    store,
    publicUrl,
    linkTtlMs: 60_000,
  });
  return { client, store };
}

/** The authorization request the client would send the browser to, and what it kept for the callback. */
async function authorize(client: OAuthClient, store: CredentialStore, stepUp?: string[]) {
  const url = new URL(await client.authorizationUrl('alice', stepUp));
  const pending = await store.takePending<AuthorizationPending>(url.searchParams.get('state')!);
  return { url, params: url.searchParams, pending: pending! };
}

// ---- discovery ----------------------------------------------------------------------------------------

test('protected resource metadata: the path-inserted well-known URL first, then the root one', async () => {
  const both = await world({
    documents: (o) => ({
      '/.well-known/oauth-protected-resource/mcp': prm(o, { scopes_supported: ['from-path'] }),
      '/.well-known/oauth-protected-resource': prm(o, { scopes_supported: ['from-root'] }),
      '/.well-known/oauth-authorization-server': asMetadata(o),
    }),
  });
  assert.deepEqual((await discover(both.url)).scopes, ['from-path']);
  const rootOnly = await world({
    documents: (o) => ({
      '/.well-known/oauth-protected-resource': prm(o, { scopes_supported: ['from-root'] }),
      '/.well-known/oauth-authorization-server': asMetadata(o),
    }),
  });
  assert.deepEqual((await discover(rootOnly.url)).scopes, ['from-root']);
  const order = rootOnly.paths().filter((p) => p.includes('oauth-protected-resource'));
  assert.deepEqual(order, [
    'GET /.well-known/oauth-protected-resource/mcp',
    'GET /.well-known/oauth-protected-resource',
  ]);
});

test("protected resource metadata: the 401's resource_metadata is used instead of the well-known URLs", async () => {
  const named = await world({
    challenge: (o) => `Bearer resource_metadata="${o}/meta/prm.json"`,
    documents: (o) => ({
      '/meta/prm.json': prm(o, { scopes_supported: ['named'] }),
      '/.well-known/oauth-protected-resource/mcp': prm(o, { scopes_supported: ['well-known'] }),
      '/.well-known/oauth-authorization-server': asMetadata(o),
    }),
  });
  assert.deepEqual((await discover(named.url)).scopes, ['named']);
  assert.ok(
    !named.paths().includes('GET /.well-known/oauth-protected-resource/mcp'),
    'the well-known URL was not needed',
  );
});

test(
  'authorization server metadata for an issuer with a path: RFC 8414 path-inserted, OpenID path-inserted, OpenID ' +
    'path-appended, in that order',
  async () => {
    for (const [found, expected] of [
      ['/.well-known/oauth-authorization-server/tenant', 1],
      ['/.well-known/openid-configuration/tenant', 2],
      ['/tenant/.well-known/openid-configuration', 3],
    ] as const) {
      const w = await world({
        documents: (o) => ({
          '/.well-known/oauth-protected-resource/mcp': prm(o, { authorization_servers: [`${o}/tenant`] }),
          [found]: asMetadata(o, { issuer: `${o}/tenant` }),
        }),
      });
      assert.equal((await discover(w.url)).issuer, `${w.origin}/tenant`);
      const tried = w.paths().filter((p) => p.includes('tenant'));
      assert.deepEqual(
        tried,
        [
          'GET /.well-known/oauth-authorization-server/tenant',
          'GET /.well-known/openid-configuration/tenant',
          'GET /tenant/.well-known/openid-configuration',
        ].slice(0, expected),
      );
    }
  },
);

test('PKCE: an authorization server that does not list S256, or lists no methods at all, is refused', async () => {
  const none = await plainWorld({ as: { code_challenge_methods_supported: undefined } });
  await assert.rejects(discover(none.url), /does not advertise PKCE S256/);
  const plain = await plainWorld({ as: { code_challenge_methods_supported: ['plain'] } });
  await assert.rejects(discover(plain.url), /S256/);
});

// ---- the authorization request ------------------------------------------------------------------------

test(
  "scope selection: the 401's scope, else scopes_supported, else config; " + 'none at all: no scope parameter',
  async () => {
    const challenged = await plainWorld({
      challenge: () => 'Bearer scope="files.read"',
      prm: { scopes_supported: ['files.read', 'files.write'] },
    });
    const first = await clientFor(challenged.url, { scopes: ['cfg'] });
    assert.equal((await authorize(first.client, first.store)).params.get('scope'), 'files.read');
    const listed = await plainWorld({ prm: { scopes_supported: ['files.read', 'files.write'] } });
    const a = await clientFor(listed.url, { scopes: ['cfg'] });
    assert.equal((await authorize(a.client, a.store)).params.get('scope'), 'files.read files.write');
    const unlisted = await plainWorld();
    const b = await clientFor(unlisted.url, { scopes: ['cfg.read'] });
    assert.equal((await authorize(b.client, b.store)).params.get('scope'), 'cfg.read');
    const c = await clientFor(unlisted.url);
    assert.equal((await authorize(c.client, c.store)).params.has('scope'), false);
  },
);

test('offline access: offline_access is asked for only when the authorization server lists it', async () => {
  const offers = await plainWorld({
    prm: { scopes_supported: ['read'] },
    as: { scopes_supported: ['read', 'offline_access'] },
  });
  const a = await clientFor(offers.url);
  assert.equal((await authorize(a.client, a.store)).params.get('scope'), 'read offline_access');
  const not = await plainWorld({ prm: { scopes_supported: ['read'] }, as: { scopes_supported: ['read'] } });
  const b = await clientFor(not.url);
  assert.equal((await authorize(b.client, b.store)).params.get('scope'), 'read');
});

test(
  'the authorization request: code + PKCE S256 + resource + state; the token request: the same resource, the ' +
    'verifier, the redirect URI',
  async () => {
    const w = await plainWorld();
    const { client, store } = await clientFor(w.url, { clientId: 'gw', clientSecret: 'secret' });
    const { params, pending } = await authorize(client, store);
    assert.equal(params.get('response_type'), 'code');
    assert.equal(params.get('client_id'), 'gw');
    assert.equal(params.get('code_challenge_method'), 'S256');
    assert.equal(params.get('resource'), w.url);
    assert.equal(params.get('code_challenge'), createHash('sha256').update(pending.verifier).digest('base64url'));
    await client.complete(pending, 'the-code', undefined);
    const token = new URLSearchParams(w.seen.find((s) => s.path === '/token')!.body);
    assert.equal(token.get('grant_type'), 'authorization_code');
    assert.equal(token.get('resource'), w.url);
    assert.equal(token.get('code_verifier'), pending.verifier);
    assert.equal(token.get('redirect_uri'), params.get('redirect_uri'));
  },
);

test(
  'token endpoint authentication as the authorization server offers it: basic, post, none; basic when it says ' +
    'nothing (RFC 8414 default)',
  async () => {
    const cases: [string[] | undefined, string | undefined, 'basic' | 'post' | 'none'][] = [
      [['client_secret_post'], 'secret', 'post'],
      [['client_secret_basic', 'client_secret_post'], 'secret', 'basic'],
      [undefined, 'secret', 'basic'],
      [['none'], undefined, 'none'],
    ];
    for (const [offered, secret, expected] of cases) {
      const w = await plainWorld({ as: { token_endpoint_auth_methods_supported: offered } });
      const { client, store } = await clientFor(w.url, { clientId: 'gw', ...(secret ? { clientSecret: secret } : {}) });
      await client.complete((await authorize(client, store)).pending, 'code', undefined);
      const request = w.seen.find((s) => s.path === '/token')!;
      const body = new URLSearchParams(request.body);
      const label = `offered ${JSON.stringify(offered)}`;
      assert.equal(request.authorization?.startsWith('Basic ') ?? false, expected === 'basic', label);
      assert.equal(body.get('client_secret'), expected === 'post' ? 'secret' : null, label);
      assert.equal(body.get('client_id'), expected === 'basic' ? null : 'gw', label);
    }
  },
);

// ---- client identity: pre-registration, then CIMD, then DCR ----------------------------------------------

test(
  'client identity: pre-registered first; else the Client ID Metadata Document when the server supports it; else ' +
    'dynamic registration',
  async () => {
    const cimd = await plainWorld({ as: { client_id_metadata_document_supported: true } });
    const pre = await clientFor(cimd.url, { clientId: 'pre-registered' }, 'https://gw.example.com');
    assert.equal((await authorize(pre.client, pre.store)).params.get('client_id'), 'pre-registered');

    const byDocument = await clientFor(cimd.url, {}, 'https://gw.example.com');
    const { params, pending } = await authorize(byDocument.client, byDocument.store);
    assert.equal(params.get('client_id'), 'https://gw.example.com/oauth/client-metadata.json');
    assert.equal(pending.client.authMethod, 'none');
    assert.ok(!cimd.paths().includes('POST /register'), 'no registration when the document is accepted');

    const dcr = await plainWorld();
    const registering = await clientFor(dcr.url, {}, 'https://gw.example.com');
    const first = (await authorize(registering.client, registering.store)).params.get('client_id');
    assert.match(first!, /^registered-/);
    assert.equal(
      (await authorize(registering.client, registering.store)).params.get('client_id'),
      first,
      'registered once per authorization server',
    );
    const registration = JSON.parse(dcr.seen.find((s) => s.path === '/register')!.body) as Record<string, unknown>;
    assert.deepEqual(registration.redirect_uris, [
      'https://gw.example.com/connect/callback',
      'https://gw.example.com/connect/signed-in',
    ]);
    assert.equal(registration.application_type, 'web');
    assert.deepEqual(registration.grant_types, ['authorization_code', 'refresh_token']);
  },
);

test(
  'client identity: a Client ID Metadata Document needs an https publicUrl, so a plain-http gateway registers ' +
    'dynamically (as a native client on loopback)',
  async () => {
    const cimd = await plainWorld({ as: { client_id_metadata_document_supported: true } });
    const { client, store } = await clientFor(cimd.url, {}, 'http://127.0.0.1:8080');
    assert.match((await authorize(client, store)).params.get('client_id')!, /^registered-/);
    assert.equal(JSON.parse(cimd.seen.find((s) => s.path === '/register')!.body).application_type, 'native');
    const neither = await plainWorld({
      as: { client_id_metadata_document_supported: true, registration_endpoint: undefined },
    });
    const stuck = await clientFor(neither.url, {}, 'http://127.0.0.1:8080');
    await assert.rejects(
      stuck.client.authorizationUrl('alice'),
      /set listen\.publicUrl to an https:\/\/ URL.*set servers\.crm\.credentials\.clientId/,
    );
  },
);

test(
  'the Client ID Metadata Document the gateway serves: its client_id is its own URL, with the callback as ' +
    'redirect URI',
  async () => {
    const { store } = await clientFor('http://127.0.0.1:1/mcp');
    const app = new Hono();
    addConnectRoutes(app as never, {
      store,
      clients: () => new Map(),
      authenticate: async () => undefined,
      publicUrl: 'https://gw.example.com',
      log: createLogger('silent'),
    });
    const response = await app.request('/oauth/client-metadata.json');
    assert.equal(response.status, 200);
    const document = (await response.json()) as Record<string, unknown>;
    assert.equal(document.client_id, 'https://gw.example.com/oauth/client-metadata.json');
    assert.equal(typeof document.client_name, 'string');
    assert.deepEqual(document.redirect_uris, [
      'https://gw.example.com/connect/callback',
      'https://gw.example.com/connect/signed-in',
    ]);
    assert.equal(document.token_endpoint_auth_method, 'none');
  },
);

// ---- the token: its resource, refresh ------------------------------------------------------------------

const record = (resource: string, extra: Partial<OAuthRecord> = {}): OAuthRecord => ({
  kind: 'oauth',
  accessToken: 'stored-token',
  resource,
  issuer: 'http://127.0.0.1:1',
  clientId: 'gw',
  connectedAt: Date.now(),
  ...extra,
});
const callMessage = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'x' } };

test(
  'a token is sent only to the resource it was issued for: one stored for another URL is not sent, the caller ' +
    'connects again',
  async () => {
    const { client, store } = await clientFor('http://127.0.0.1:1/mcp');
    await store.put('alice', 'crm', record('http://127.0.0.1:1/other-mcp'));
    assert.equal(client.cached({ principal: 'alice' } as never), undefined);
    const obtained = await client.obtain({ principal: 'alice' } as never, callMessage);
    assert.ok('refused' in obtained && obtained.data?.reason === 'connect_required', JSON.stringify(obtained));
    // The control: the same token stored for this URL (trailing slash aside) is sent.
    await store.put('alice', 'crm', record('http://127.0.0.1:1/mcp/'));
    assert.deepEqual(await client.obtain({ principal: 'alice' } as never, callMessage), {
      authorization: 'Bearer stored-token',
    });
  },
);

test(
  'refresh: an expired token is refreshed at its token endpoint, as its client, for its resource; the new ' +
    'refresh token replaces the old',
  async () => {
    const w = await plainWorld();
    const { client, store } = await clientFor(w.url);
    await store.put(
      'alice',
      'crm',
      record(w.url, {
        expiresAt: Date.now() - 1,
        refreshToken: 'rt-old',
        tokenEndpoint: `${w.origin}/token`,
        clientSecret: 's',
        authMethod: 'client_secret_post',
      }),
    );
    const obtained = await client.obtain({ principal: 'alice' } as never, callMessage);
    assert.ok('authorization' in obtained && obtained.authorization.startsWith('Bearer at-'), JSON.stringify(obtained));
    const form = new URLSearchParams(w.seen.find((s) => s.path === '/token')!.body);
    assert.equal(form.get('grant_type'), 'refresh_token');
    assert.equal(form.get('refresh_token'), 'rt-old');
    assert.equal(form.get('resource'), w.url);
    assert.equal(form.get('client_secret'), 's');
    const after = (await store.get('alice', 'crm')) as OAuthRecord;
    assert.equal(after.refreshToken, 'rt-next');
  },
);

// ---- RFC 9207 -----------------------------------------------------------------------------------------

test(
  "RFC 9207, the spec's table: compared when present (no normalization), refused when promised and absent, else " +
    'proceed',
  () => {
    const pending = (issParameterSupported: boolean) =>
      ({ issuer: 'https://as.example.com', issParameterSupported }) as AuthorizationPending;
    assert.equal(issuerProblem(pending(true), 'https://as.example.com'), undefined);
    assert.match(issuerProblem(pending(true), undefined)!, /RFC 9207/);
    assert.equal(issuerProblem(pending(false), 'https://as.example.com'), undefined);
    assert.match(issuerProblem(pending(false), 'https://evil.example.com')!, /RFC 9207/);
    assert.equal(issuerProblem(pending(false), undefined), undefined);
    for (const lookalike of ['https://AS.example.com', 'https://as.example.com/', 'https://as.example.com:443']) {
      assert.match(issuerProblem(pending(true), lookalike)!, /RFC 9207/, lookalike);
    }
  },
);

test('RFC 9207 at the callback: an error response from another issuer is neither acted on nor shown', async () => {
  const { store } = await clientFor('http://127.0.0.1:1/mcp');
  const app = new Hono();
  addConnectRoutes(app as never, {
    store,
    clients: () => new Map(),
    authenticate: async () => undefined,
    log: createLogger('silent'),
  });
  const pending: AuthorizationPending = {
    step: 'authorize',
    principal: 'alice',
    server: 'crm',
    verifier: 'v',
    issuer: 'https://as.example.com',
    issParameterSupported: false,
    tokenEndpoint: 'http://127.0.0.1:1/token',
    resource: 'http://127.0.0.1:1/mcp',
    client: { clientId: 'gw', authMethod: 'none' },
    redirectUri: 'https://gw.example.com/connect/callback',
  };
  // The browser that confirmed the link (the callback is finished only there: pages/browser-binding.ts).
  const browser = new BrowserBinding(undefined).bind(undefined);
  pending.binding = browser.hash;
  const headers = { cookie: browser.setCookie!.split(';')[0]! };
  const state = await store.putPending(pending, 60_000);
  const answer = await app.request(
    `/connect/callback?state=${state}&iss=${encodeURIComponent('https://evil.example.com')}` +
      '&error=visit_evil_example_now',
    { headers },
  );
  assert.equal(answer.status, 400);
  const page = await answer.text();
  assert.match(page, /RFC 9207/);
  assert.ok(!page.includes('visit_evil_example_now'), 'the foreign error text is not shown');
  // The control: the same error from the right issuer is shown.
  const again = await store.putPending(pending, 60_000);
  const own = await (
    await app.request(
      `/connect/callback?state=${again}&iss=${encodeURIComponent('https://as.example.com')}&error=access_denied`,
      { headers },
    )
  ).text();
  assert.match(own, /access_denied/);
});

// ---- authorization server binding ------------------------------------------------------------------------

test(
  'a pre-registered client goes only to its authorization server: configured issuer, or the first one used; ' +
    'another gets no secret',
  async () => {
    // The resource's metadata names an authorization server elsewhere (moved, or tampered with).
    const elsewhere = await plainWorld();
    const resource = await world({
      documents: (o) => ({
        '/.well-known/oauth-protected-resource/mcp': {
          resource: `${o}/mcp`,
          authorization_servers: [elsewhere.origin],
        },
      }),
    });
    const configured = await clientFor(resource.url, {
      clientId: 'gw',
      clientSecret: 'secret',
      issuer: 'https://as.example.com',
    });
    await assert.rejects(
      configured.client.authorizationUrl('alice'),
      new RegExp(
        String.raw`names authorization server http:\/\/127\.0\.0\.1:\d+, but servers\.crm\.credentials\.clientId ` +
          String.raw`is registered at https:\/\/as\.example\.com.*set servers\.crm\.credentials\.issuer`,
      ),
    );
    // The first use pins it: once used at one server, the same client is refused at another.
    let at = elsewhere.origin;
    const other = await plainWorld();
    const moving = await world({
      documents: (o) => ({
        '/.well-known/oauth-protected-resource/mcp': { resource: `${o}/mcp`, authorization_servers: [at] },
      }),
    });
    const pinned = await clientFor(moving.url, { clientId: 'gw', clientSecret: 'secret' });
    assert.equal((await authorize(pinned.client, pinned.store)).params.get('client_id'), 'gw');
    at = other.origin;
    await assert.rejects(pinned.client.authorizationUrl('alice'), /is registered at http:\/\/127\.0\.0\.1/);
    assert.ok(!other.paths().includes('POST /token'), 'nothing, and no secret, went to the other server');
    // The configured issuer is picked when the resource lists several.
    const several = await world({
      documents: (o) => ({
        '/.well-known/oauth-protected-resource/mcp': {
          resource: `${o}/mcp`,
          authorization_servers: [elsewhere.origin, other.origin],
        },
      }),
    });
    const picking = await clientFor(several.url, { clientId: 'gw', issuer: other.origin });
    assert.equal((await authorize(picking.client, picking.store)).url.origin, other.origin);
  },
);

// ---- communication security ---------------------------------------------------------------------------

/**
 * Runs `body` with fetch recording every URL not on this machine (and refusing it: no test traffic leaves loopback).
 */
async function watchingRemoteFetches(body: () => Promise<void>): Promise<string[]> {
  const remote: string[] = [];
  const real = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.hostname !== '127.0.0.1') {
      remote.push(url.href);
      return Promise.reject(new TypeError(`test: no traffic to ${url.host}`));
    }
    return real(input, init);
  };
  try {
    await body();
  } finally {
    globalThis.fetch = real;
  }
  return remote;
}

test(
  'an upstream naming an authorization server over plain http elsewhere: refused before anything is fetched from ' +
    'it, and no link is made',
  async () => {
    const resource = await world({
      documents: (o) => ({
        '/.well-known/oauth-protected-resource/mcp': {
          resource: `${o}/mcp`,
          authorization_servers: ['http://as.attacker.example'],
        },
      }),
    });
    const remote = await watchingRemoteFetches(async () => {
      await assert.rejects(
        discover(resource.url),
        /the authorization server http:\/\/as\.attacker\.example is not served over https; MCP requires https/,
      );
      const { client } = await clientFor(resource.url);
      await assert.rejects(client.authorizationUrl('alice'), /http:\/\/as\.attacker\.example is not served over https/);
    });
    assert.deepEqual(remote, []);
  },
);

test(
  'authorization server metadata naming any endpoint over plain http elsewhere is refused, naming it; https ' +
    'endpoints and loopback http pass',
  async () => {
    for (const field of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'jwks_uri']) {
      const w = await plainWorld({ as: { [field]: `http://attacker.example/${field}` } });
      const remote = await watchingRemoteFetches(async () => {
        await assert.rejects(
          discover(w.url),
          new RegExp(`publishes ${field} http://attacker\\.example/${field}, which is not https`),
        );
        // Nothing, and no code or secret, went to the endpoint: the client stops at discovery.
        const { client } = await clientFor(w.url, { clientId: 'gw', clientSecret: 'secret' });
        await assert.rejects(client.authorizationUrl('alice'), /which is not https/);
      });
      assert.deepEqual(remote, [], field);
    }
    const secure = await plainWorld({
      as: { token_endpoint: 'https://as.example.com/token', jwks_uri: 'https://as.example.com/jwks' },
    });
    assert.equal((await discover(secure.url)).tokenEndpoint, 'https://as.example.com/token');
    assert.equal((await discover((await plainWorld()).url)).tokenEndpoint.startsWith('http://127.0.0.1:'), true);
  },
);

test(
  'a stored token whose record names a token endpoint over plain http elsewhere is not refreshed there: nothing ' +
    'is sent, the caller connects again',
  async () => {
    const w = await plainWorld();
    const { client, store } = await clientFor(w.url);
    // As a record made before discovery refused clear-text endpoints would be: expired, with a refresh token and a
    // secret.
    await store.put(
      'alice',
      'crm',
      record(w.url, {
        expiresAt: Date.now() - 1,
        refreshToken: 'rt-secret',
        tokenEndpoint: 'http://as.attacker.example/token',
        clientSecret: 's',
        authMethod: 'client_secret_post',
      }),
    );
    let obtained: Awaited<ReturnType<OAuthClient['obtain']>> | undefined;
    const remote = await watchingRemoteFetches(async () => {
      obtained = await client.obtain({ principal: 'alice' } as never, callMessage);
    });
    assert.deepEqual(remote, [], 'the refresh token and the client secret went nowhere');
    assert.ok(
      obtained !== undefined && 'refused' in obtained && obtained.data?.reason === 'connect_required',
      JSON.stringify(obtained),
    );
    assert.equal(await store.get('alice', 'crm'), undefined, 'the record that names it is gone');
    assert.equal(
      w.seen.some((s) => s.path === '/token'),
      false,
    );
  },
);
