// A perCaller stdio server's authorization server, found from the issuer its config names
// (src/credentials/oauth/issuer-discovery.ts): RFC 8414 metadata, else OpenID discovery, with the same
// refusals as discovery from a 401 (another issuer named, no PKCE S256), and the configured resource, or
// none, on the authorization request.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { discoverIssuer } from '../../src/credentials/oauth/issuer-discovery.js';
import { OAuthClient } from '../../src/credentials/oauth/oauth-client.js';
import { openCredentialStore } from '../../src/credentials/store.js';
import { requestToken } from '../../src/credentials/token-endpoint.js';
import { tempDir } from '../temp.js';

const servers: Server[] = [];
after(() => {
  for (const server of servers) server.close();
});

/** An authorization server answering its metadata at `at` only; `metadata` is given its own origin. */
async function authorizationServer(at: string, metadata: (origin: string) => Record<string, unknown>): Promise<string> {
  let origin = '';
  const server = createServer((req, res) => {
    if (req.url !== at) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(metadata(origin)));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return origin;
}

const good = (origin: string) => ({
  issuer: origin,
  authorization_endpoint: `${origin}/authorize`,
  token_endpoint: `${origin}/token`,
  code_challenge_methods_supported: ['S256'],
});

test('RFC 8414 metadata of the configured issuer; the configured resource is the one tokens are for', async () => {
  const issuer = await authorizationServer('/.well-known/oauth-authorization-server', good);
  const found = await discoverIssuer(issuer, 'https://api.example.com');
  assert.equal(found.issuer, issuer);
  assert.equal(found.tokenEndpoint, `${issuer}/token`);
  assert.equal(found.resource, 'https://api.example.com');
});

test('OpenID discovery when there is no RFC 8414 document', async () => {
  const issuer = await authorizationServer('/.well-known/openid-configuration', good);
  assert.equal((await discoverIssuer(issuer, undefined)).authorizationEndpoint, `${issuer}/authorize`);
});

test('metadata naming another issuer is refused, naming credentials.issuer', async () => {
  const issuer = await authorizationServer('/.well-known/oauth-authorization-server', (origin) => ({
    ...good(origin),
    issuer: 'https://elsewhere.example.com',
  }));
  await assert.rejects(discoverIssuer(issuer, undefined), /elsewhere\.example\.com.*credentials\.issuer/);
});

test('an authorization server without PKCE S256 is refused', async () => {
  const issuer = await authorizationServer('/.well-known/oauth-authorization-server', (origin) => ({
    ...good(origin),
    code_challenge_methods_supported: ['plain'],
  }));
  await assert.rejects(discoverIssuer(issuer, undefined), /S256/);
});

test('no metadata at all is refused, naming where it looked', async () => {
  const issuer = await authorizationServer('/nowhere', good);
  await assert.rejects(discoverIssuer(issuer, undefined), /no authorization server metadata/);
});

test('the authorization request carries the configured resource, and none when none is configured', async () => {
  const issuer = await authorizationServer('/.well-known/oauth-authorization-server', good);
  const store = await openCredentialStore(
    { key: 'k'.repeat(32), store: 'file', file: path.join(tempDir('issuer-discovery-'), 'c.json') },
    { url: 'redis://127.0.0.1:1', keyPrefix: 'unused:' },
  );
  const clientFor = (resource: string | undefined) =>
    new OAuthClient({
      server: 'github',
      url: resource ?? issuer,
      settings: { type: 'oauth', clientId: 'gw', scopes: ['repo'], env: 'GITHUB_TOKEN', issuer, resource },
      store,
      publicUrl: 'https://gw.example.com',
      linkTtlMs: 60_000,
      discover: () => discoverIssuer(issuer, resource),
    });
  const bound = new URL(await clientFor('https://api.example.com').authorizationUrl('alice'));
  assert.equal(bound.origin + bound.pathname, `${issuer}/authorize`);
  assert.equal(bound.searchParams.get('resource'), 'https://api.example.com');
  assert.equal(bound.searchParams.get('scope'), 'repo', 'the configured scopes');
  const unbound = new URL(await clientFor(undefined).authorizationUrl('alice'));
  assert.equal(unbound.searchParams.has('resource'), false, 'no resource parameter when none is configured');
  await store.close();
});

test('a token request for a record without a resource carries no resource parameter', async () => {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: 'fresh', token_type: 'Bearer' }));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  await requestToken(
    endpoint,
    { clientId: 'gw', authMethod: 'none' },
    { grant_type: 'refresh_token', refresh_token: 'r', resource: '' },
  );
  await requestToken(
    endpoint,
    { clientId: 'gw', authMethod: 'none' },
    { grant_type: 'refresh_token', refresh_token: 'r', resource: 'https://api.example.com' },
  );
  assert.equal(new URLSearchParams(bodies[0]).has('resource'), false);
  assert.equal(new URLSearchParams(bodies[1]).get('resource'), 'https://api.example.com');
});
