// The 2025-03-26 revision's discovery for an upstream with no protected resource metadata
// (src/credentials/oauth/discovery-2025-03-26.ts): the authorization server's metadata at the upstream's origin,
// else the default endpoints there; never when the upstream publishes (or promises) protected resource metadata,
// never an issuer on another host, never an endpoint in clear text off loopback. Small servers on 127.0.0.1.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { discover } from '../../src/credentials/oauth/discovery.js';
import { OAuthClient } from '../../src/credentials/oauth/oauth-client.js';
import { openCredentialStore } from '../../src/credentials/store.js';
import { tempDir } from '../temp.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const servers: Server[] = [];
after(() => {
  for (const server of servers) server.close();
});

async function serve(handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

interface Seen {
  line: string;
  protocolVersion: string | undefined;
}

/**
 * An MCP endpoint at /v1/mcp whose 401 carries `challenge`; `routes` answers the paths a test gives (a function of
 * the origin), everything else is 404.
 */
async function upstream(
  routes: (origin: string) => Record<string, (res: ServerResponse) => void>,
  challenge: string | ((origin: string) => string) = 'Bearer error="invalid_token"',
) {
  const seen: Seen[] = [];
  let origin = '';
  origin = await serve((req, res) => {
    const p = new URL(req.url!, origin).pathname;
    seen.push({ line: `${req.method} ${p}`, protocolVersion: req.headers['mcp-protocol-version'] as string });
    if (req.method === 'POST' && p === '/v1/mcp') {
      const header = typeof challenge === 'function' ? challenge(origin) : challenge;
      return res.writeHead(401, { 'www-authenticate': header }).end();
    }
    const route = routes(origin)[`${req.method} ${p}`];
    if (route) return route(res);
    res.writeHead(404, { 'content-type': 'text/html' }).end('<p>Cannot GET</p>');
  });
  return { origin, url: `${origin}/v1/mcp`, seen, lines: () => seen.map((s) => s.line) };
}

const ORIGIN_METADATA = 'GET /.well-known/oauth-authorization-server';

test('no protected resource metadata: the authorization server metadata at the upstream origin is used', async () => {
  const w = await upstream(
    (origin) => ({
      [ORIGIN_METADATA]: (res) =>
        json(res, 200, {
          issuer: `${origin}/oauth`,
          authorization_endpoint: `${origin}/oauth/authorize`,
          token_endpoint: `${origin}/oauth/token`,
          registration_endpoint: `${origin}/oauth/register`,
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none'],
        }),
    }),
    'Bearer scope="files.read"',
  );
  const found = await discover(w.url);
  assert.equal(found.issuer, `${w.origin}/oauth`, 'an issuer with a path on the upstream origin is taken');
  assert.equal(found.authorizationEndpoint, `${w.origin}/oauth/authorize`);
  assert.equal(found.tokenEndpoint, `${w.origin}/oauth/token`);
  assert.equal(found.registrationEndpoint, `${w.origin}/oauth/register`);
  assert.deepEqual(found.tokenAuthMethods, ['none']);
  assert.equal(found.resource, w.url, 'tokens are asked for the upstream itself');
  assert.deepEqual(found.scopes, ['files.read'], "the 401's scope");
  // The 2025-06-18+ path first: both well-known protected resource metadata URLs, then the origin.
  assert.deepEqual(w.lines(), [
    'POST /v1/mcp',
    'GET /.well-known/oauth-protected-resource/v1/mcp',
    'GET /.well-known/oauth-protected-resource',
    ORIGIN_METADATA,
  ]);
  assert.equal(w.seen.at(-1)?.protocolVersion, '2025-03-26', 'the revision asks clients to name it');
});

test('no metadata at all: the default endpoints /authorize, /token and /register at the origin', async () => {
  const w = await upstream(() => ({}));
  const found = await discover(w.url);
  assert.equal(found.issuer, w.origin);
  assert.equal(found.authorizationEndpoint, `${w.origin}/authorize`);
  assert.equal(found.tokenEndpoint, `${w.origin}/token`);
  assert.equal(found.registrationEndpoint, `${w.origin}/register`);
  assert.deepEqual(found.codeChallengeMethods, ['S256'], 'the revision requires PKCE of every server');
  assert.deepEqual(found.tokenAuthMethods, ['client_secret_basic'], "RFC 8414's default");
  assert.equal(found.issParameterSupported, false);
  assert.equal(found.resource, w.url);
  assert.deepEqual(found.scopes, []);
});

test(
  'no metadata at all: ' + 'a connect link registers at /register and sends the browser to /authorize, with PKCE',
  async () => {
    const w = await upstream(() => ({
      'POST /register': (res) => json(res, 201, { client_id: 'fallback-client' }),
    }));
    const store = await openCredentialStore(
      { key: 'k'.repeat(32), store: 'file', file: path.join(tempDir('oauth-2025-03-26-'), 'c.json') },
      { url: '', keyPrefix: '' },
    );
    try {
      const client = new OAuthClient({
        server: 'legacy',
        url: w.url,
        settings: { type: 'oauth', scopes: ['files.read'] },
        store,
        publicUrl: 'http://127.0.0.1:2',
        linkTtlMs: 60_000,
      });
      const authorize = new URL(await client.authorizationUrl('alice'));
      assert.equal(`${authorize.origin}${authorize.pathname}`, `${w.origin}/authorize`);
      assert.equal(authorize.searchParams.get('client_id'), 'fallback-client');
      assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
      assert.ok(authorize.searchParams.get('code_challenge'));
      assert.equal(authorize.searchParams.get('resource'), w.url);
      assert.equal(authorize.searchParams.get('scope'), 'files.read', 'no scope from the upstream: the config');
      assert.ok(w.lines().includes('POST /register'));
    } finally {
      await store.close();
    }
  },
);

test('protected resource metadata present: no fallback, whatever goes wrong after it', async () => {
  // The upstream's origin would answer as a 2025-03-26 server; none of these may reach it.
  const legacyRoutes = (origin: string) => ({
    [ORIGIN_METADATA]: (res: ServerResponse) =>
      json(res, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        code_challenge_methods_supported: ['S256'],
      }),
  });
  // Its metadata names an authorization server elsewhere that publishes none.
  const silentServer = await serve((_req, res) => json(res, 404, {}));
  const elsewhere = await upstream((origin) => ({
    ...legacyRoutes(origin),
    'GET /.well-known/oauth-protected-resource/v1/mcp': (res) =>
      json(res, 200, { resource: `${origin}/v1/mcp`, authorization_servers: [silentServer] }),
  }));
  await assert.rejects(discover(elsewhere.url), /no authorization server metadata for/);
  assert.ok(!elsewhere.lines().includes(ORIGIN_METADATA));

  // Its metadata names another resource.
  const other = await upstream((origin) => ({
    ...legacyRoutes(origin),
    'GET /.well-known/oauth-protected-resource/v1/mcp': (res) =>
      json(res, 200, { resource: 'https://elsewhere.example/mcp', authorization_servers: [origin] }),
  }));
  await assert.rejects(discover(other.url), /refusing to send it tokens for another resource/);
  assert.ok(!other.lines().includes(ORIGIN_METADATA));

  // The 401 names metadata that is not there.
  const named = await upstream(legacyRoutes, (origin) => `Bearer resource_metadata="${origin}/nowhere"`);
  await assert.rejects(discover(named.url), /no protected resource metadata \(RFC 9728\).*nowhere \(HTTP 404\)/);
  assert.ok(!named.lines().includes(ORIGIN_METADATA));

  // The well-known URL fails (5xx): the upstream is failing, not saying it has none.
  const failing = await upstream((origin) => ({
    ...legacyRoutes(origin),
    'GET /.well-known/oauth-protected-resource/v1/mcp': (res) => json(res, 503, {}),
  }));
  await assert.rejects(discover(failing.url), /HTTP 503/);
  assert.ok(!failing.lines().includes(ORIGIN_METADATA));
});

test(
  "attack: a PRM-less upstream's origin metadata names an issuer on another host, " + 'or a clear-text endpoint',
  async () => {
    const anotherHost = await upstream(() => ({
      [ORIGIN_METADATA]: (res) =>
        json(res, 200, {
          issuer: 'https://attacker.example',
          authorization_endpoint: 'https://attacker.example/authorize',
          token_endpoint: 'https://attacker.example/token',
          code_challenge_methods_supported: ['S256'],
        }),
    }));
    await assert.rejects(discover(anotherHost.url), /names issuer https:\/\/attacker\.example, which is not on/);

    const clearText = await upstream((origin) => ({
      [ORIGIN_METADATA]: (res) =>
        json(res, 200, {
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: 'http://tokens.example/token',
          code_challenge_methods_supported: ['S256'],
        }),
    }));
    await assert.rejects(discover(clearText.url), /token_endpoint http:\/\/tokens\.example\/token, which is not https/);

    const noPkce = await upstream((origin) => ({
      [ORIGIN_METADATA]: (res) =>
        json(res, 200, { issuer: origin, authorization_endpoint: `${origin}/a`, token_endpoint: `${origin}/t` }),
    }));
    await assert.rejects(discover(noPkce.url), /does not advertise PKCE S256/);
  },
);

test('attack: an upstream over plain http off loopback gets no authorization request sent to its origin', async () => {
  // Answered in memory (no network): the upstream's 401 and 404 for every metadata URL, as a PRM-less server would.
  const asked: string[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    asked.push(`${init?.method ?? 'GET'} ${url}`);
    return init?.method === 'POST' ? new Response(null, { status: 401 }) : new Response('{}', { status: 404 });
  };
  try {
    await assert.rejects(
      discover('http://mcp.example/v1/mcp'),
      /its origin http:\/\/mcp\.example .* is not served over https/,
    );
  } finally {
    globalThis.fetch = realFetch;
  }
  assert.ok(asked.length > 0, 'the control: discovery did run');
  assert.deepEqual(
    asked.filter((line) => !line.includes('oauth-protected-resource') && !line.startsWith('POST ')),
    [],
    'nothing but the protected resource metadata was asked of a clear-text origin',
  );
});
