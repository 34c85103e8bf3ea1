// The client side of the MCP authorization spec (basic/authorization, 2026-07-28) as the gateway's OAuth
// client does it, against small servers on 127.0.0.1 that produce the variants a real authorization
// server would not: where metadata is found, which scopes are asked for, S256 required, a resource that is
// not the upstream refused, the RFC 9207 iss check, token endpoint authentication methods.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { bearerParameters, discover, sameResource } from '../../src/credentials/oauth/discovery.js';
import { OAuthClient, type AuthorizationPending } from '../../src/credentials/oauth/oauth-client.js';
import { openCredentialStore } from '../../src/credentials/store.js';
import { requestToken } from '../../src/credentials/token-endpoint.js';
import { tempDir } from '../temp.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const servers: Server[] = [];
after(() => {
  for (const server of servers) server.close();
});

async function serve(handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => handler(req, res, body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** An upstream + authorization server in one: which metadata paths answer is up to the test. */
async function world(options: {
  challenge?: string | ((origin: string) => string);
  prmPath?: string | null;
  asPath: string;
  as?: Record<string, unknown>;
  prm?: Record<string, unknown>;
}) {
  const seen: string[] = [];
  let origin = '';
  origin = await serve((req, res) => {
    const p = new URL(req.url!, origin).pathname;
    seen.push(`${req.method} ${p}`);
    if (req.method === 'POST' && p === '/mcp') {
      const challenge =
        typeof options.challenge === 'function' ? options.challenge(origin) : (options.challenge ?? 'Bearer');
      return res.writeHead(401, { 'www-authenticate': challenge }).end();
    }
    if (options.prmPath !== null && p === (options.prmPath ?? '/.well-known/oauth-protected-resource/mcp')) {
      return json(res, 200, {
        resource: `${origin}/mcp`,
        authorization_servers: [origin],
        scopes_supported: ['files.read', 'files.write'],
        ...options.prm,
      });
    }
    if (p === options.asPath) {
      return json(res, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        code_challenge_methods_supported: ['S256'],
        ...options.as,
      });
    }
    json(res, 404, {});
  });
  return { origin, url: `${origin}/mcp`, seen };
}

test(
  'metadata: resource_metadata named by the 401 is used, ' + 'and its scope parameter wins over scopes_supported',
  async () => {
    // The control: not at a well-known path, and not named, the metadata is never read; the upstream looks like a
    // 2025-03-26 server (its origin's metadata, no scopes_supported).
    const hidden = await world({ asPath: '/.well-known/oauth-authorization-server', prmPath: '/custom-prm' });
    assert.deepEqual((await discover(hidden.url)).scopes, []);
    assert.ok(!hidden.seen.includes('GET /custom-prm'));
    const named = await world({
      asPath: '/.well-known/oauth-authorization-server',
      prmPath: '/custom-prm',
      challenge: (origin) => `Bearer resource_metadata="${origin}/custom-prm", scope="files.read admin"`,
    });
    const found = await discover(named.url);
    assert.deepEqual(found.scopes, ['files.read', 'admin']);
    assert.ok(named.seen.includes('GET /custom-prm'));
    assert.deepEqual(
      bearerParameters('Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x.example/prm"'),
      {
        error: 'insufficient_scope',
        scope: 'a b',
        resourceMetadata: 'https://x.example/prm',
      },
    );
  },
);

test('metadata: the path-suffixed well-known PRM, then RFC 8414, then OpenID discovery', async () => {
  const oauth = await world({ asPath: '/.well-known/oauth-authorization-server' });
  const found = await discover(oauth.url);
  assert.equal(found.tokenEndpoint, `${oauth.origin}/token`);
  assert.deepEqual(found.scopes, ['files.read', 'files.write'], 'no scope in the 401: scopes_supported');
  assert.ok(oauth.seen.includes('GET /.well-known/oauth-protected-resource/mcp'));

  const oidc = await world({
    asPath: '/.well-known/openid-configuration',
    prmPath: '/.well-known/oauth-protected-resource',
  });
  const viaOidc = await discover(oidc.url);
  assert.equal(viaOidc.issuer, oidc.origin);
  assert.ok(
    oidc.seen.indexOf('GET /.well-known/oauth-authorization-server') <
      oidc.seen.indexOf('GET /.well-known/openid-configuration'),
    'RFC 8414 first',
  );
});

test("scopes: the 401's scope parameter is asked for before scopes_supported", async () => {
  const w = await world({ asPath: '/.well-known/oauth-authorization-server', challenge: 'Bearer scope="files.read"' });
  assert.deepEqual((await discover(w.url)).scopes, ['files.read']);
});

test('refused: metadata for another resource, an issuer that differs from its metadata, no S256', async () => {
  const other = await world({
    asPath: '/.well-known/oauth-authorization-server',
    prm: { resource: 'https://elsewhere.example/mcp' },
  });
  await assert.rejects(discover(other.url), /not .*refusing to send it tokens for another resource/);
  const wrongIssuer = await world({
    asPath: '/.well-known/oauth-authorization-server',
    as: { issuer: 'https://impostor.example' },
  });
  await assert.rejects(discover(wrongIssuer.url), /must be equal/);
  const plain = await world({
    asPath: '/.well-known/oauth-authorization-server',
    as: { code_challenge_methods_supported: ['plain'] },
  });
  await assert.rejects(discover(plain.url), /S256/);
  assert.ok(sameResource('https://a.example/mcp/', 'https://a.example/mcp'));
  assert.ok(!sameResource('https://a.example/mcp', 'https://a.example/other'));
});

test(
  'token endpoint authentication: basic puts the form-encoded pair in Authorization; post puts it in the body; ' +
    'none sends only client_id',
  async () => {
    const seen: { authorization?: string; body: URLSearchParams }[] = [];
    const endpoint = await serve((req, res, body) => {
      seen.push({ authorization: req.headers.authorization, body: new URLSearchParams(body) });
      json(res, 200, { access_token: 'at', token_type: 'Bearer', expires_in: 60 });
    });
    const form = { grant_type: 'refresh_token', refresh_token: 'rt' };
    await requestToken(
      endpoint,
      { clientId: 'gw client', clientSecret: 's:e&cret', authMethod: 'client_secret_basic' },
      form,
    );
    await requestToken(endpoint, { clientId: 'gw', clientSecret: 'secret', authMethod: 'client_secret_post' }, form);
    await requestToken(endpoint, { clientId: 'gw', authMethod: 'none' }, form);
    assert.equal(Buffer.from(seen[0]!.authorization!.slice(6), 'base64').toString(), 'gw+client:s%3Ae%26cret');
    assert.equal(seen[0]!.body.get('client_secret'), null);
    assert.equal(seen[1]!.authorization, undefined);
    assert.equal(seen[1]!.body.get('client_secret'), 'secret');
    assert.equal(seen[2]!.body.get('client_id'), 'gw');
    assert.equal(seen[2]!.body.get('client_secret'), null);
  },
);

test(
  'RFC 9207: a callback whose iss is another issuer, or missing where promised, is refused before any token ' +
    'request',
  async () => {
    let tokenRequests = 0;
    const endpoint = await serve((_req, res) => {
      tokenRequests++;
      json(res, 200, { access_token: 'at', token_type: 'Bearer' });
    });
    const store = await openCredentialStore(
      { key: 'k'.repeat(32), store: 'file', file: path.join(tempDir('oauth-client-'), 'c.json') },
      { url: '', keyPrefix: '' },
    );
    const client = new OAuthClient({
      server: 'crm',
      url: 'http://127.0.0.1:1/mcp',
      settings: { type: 'oauth', scopes: [] },
      store,
      publicUrl: 'http://127.0.0.1:2',
      linkTtlMs: 60_000,
    });
    const pending: AuthorizationPending = {
      step: 'authorize',
      principal: 'alice',
      server: 'crm',
      verifier: 'v',
      issuer: 'https://as.example',
      issParameterSupported: true,
      tokenEndpoint: endpoint,
      resource: 'http://127.0.0.1:1/mcp',
      client: { clientId: 'gw', authMethod: 'none' },
      redirectUri: 'http://127.0.0.1:2/connect/callback',
    };
    await assert.rejects(client.complete(pending, 'code', 'https://impostor.example'), /RFC 9207/);
    await assert.rejects(client.complete(pending, 'code', undefined), /RFC 9207/);
    assert.equal(tokenRequests, 0);
    // The control: the right issuer goes on to the token endpoint and stores the token for alice at crm.
    await client.complete(pending, 'code', 'https://as.example');
    assert.equal(tokenRequests, 1);
    assert.equal((await store.get('alice', 'crm'))?.kind, 'oauth');
    assert.equal(await store.get('bob', 'crm'), undefined);
  },
);
