// Which resource an upstream's protected resource metadata may name (RFC 9728 §3.3, as the MCP authorization spec's
// discovery uses it), in upstream-oauth-conformance.test.ts's manner: a small resource + authorization server on
// 127.0.0.1 shaped per test. Metadata is valid only for the resource identifier its URL was made from: the upstream's
// URL for the path-inserted well-known URL and for the 401's resource_metadata, the origin for the root well-known
// URL. The conformance suite's auth/metadata-var2 is the root case (with an issuer under a path), which the gateway
// refused as "another resource" before.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { discover } from '../../src/credentials/oauth/discovery.js';
import { type AuthorizationPending, OAuthClient } from '../../src/credentials/oauth/oauth-client.js';
import { type CredentialStore, openCredentialStore } from '../../src/credentials/store.js';
import { tempDir } from '../temp.js';

const servers: Server[] = [];
const stores: CredentialStore[] = [];
after(async () => {
  for (const server of servers) server.close();
  for (const store of stores) await store.close();
});

/**
 * One origin: the MCP server at /mcp (401 without a token), its protected resource metadata at `prmPath` naming
 * `resource(origin)`, an authorization server whose issuer is `<origin>/tenant1` (metadata path-inserted, RFC 8414).
 */
async function world(prmPath: string, resource: (origin: string) => string, challenge = () => 'Bearer') {
  const seen: { method: string; path: string; body: string }[] = [];
  let origin = '';
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const p = new URL(req.url!, origin).pathname;
      seen.push({ method: req.method!, path: p, body });
      const send = (json: unknown) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      if (req.method === 'POST' && p === '/mcp') return res.writeHead(401, { 'www-authenticate': challenge() }).end();
      if (p === prmPath) return send({ resource: resource(origin), authorization_servers: [`${origin}/tenant1`] });
      if (p === '/.well-known/oauth-authorization-server/tenant1')
        return send({
          issuer: `${origin}/tenant1`,
          authorization_endpoint: `${origin}/tenant1/authorize`,
          token_endpoint: `${origin}/tenant1/token`,
          code_challenge_methods_supported: ['S256'],
        });
      if (req.method === 'POST' && p === '/tenant1/token')
        return send({ access_token: 'for-the-origin', token_type: 'Bearer', expires_in: 3600 });
      res.writeHead(404).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, url: `${origin}/mcp`, seen };
}

test(
  'metadata at the root well-known URL naming the origin (RFC 9728 §3.3): accepted; the token is asked for that ' +
    'resource, stored, and sent to the upstream',
  async () => {
    const w = await world('/.well-known/oauth-protected-resource', (origin) => origin);
    const found = await discover(w.url);
    assert.equal(found.resource, w.origin);
    assert.equal(found.issuer, `${w.origin}/tenant1`);

    const store = await openCredentialStore(
      { key: 'k'.repeat(32), store: 'file', file: path.join(tempDir('oauth-resource-'), 'c.json') },
      { url: '', keyPrefix: '' },
    );
    stores.push(store);
    const client = new OAuthClient({
      server: 'crm',
      url: w.url,
      settings: { type: 'oauth', scopes: [], clientId: 'gw' },
      store,
      publicUrl: 'http://127.0.0.1:9',
      linkTtlMs: 60_000,
    });
    const authorization = new URL(await client.authorizationUrl('alice'));
    assert.equal(authorization.searchParams.get('resource'), w.origin);
    const state = authorization.searchParams.get('state')!;
    const pending = await store.takePending<AuthorizationPending>(state);
    await client.complete(pending!, 'the-code', undefined);
    const token = new URLSearchParams(w.seen.find((s) => s.path === '/tenant1/token')!.body);
    assert.equal(token.get('resource'), w.origin);
    // The token, stored for the origin, goes to the upstream under it (not a link to connect again).
    const call = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'x' } };
    assert.deepEqual(await client.obtain({ principal: 'alice' } as never, call), {
      authorization: 'Bearer for-the-origin',
    });
  },
);

test(
  'the origin is taken only from the root well-known URL: named by the path-inserted URL or by the 401, and ' +
    'another origin anywhere, it is refused',
  async () => {
    const pathInserted = await world('/.well-known/oauth-protected-resource/mcp', (origin) => origin);
    await assert.rejects(discover(pathInserted.url), /names http:\/\/127\.0\.0\.1:\d+, not .*\/mcp: refusing/);
    let named = '';
    const byChallenge = await world(
      '/meta/prm.json',
      (origin) => origin,
      () => `Bearer resource_metadata="${named}"`,
    );
    named = `${byChallenge.origin}/meta/prm.json`;
    await assert.rejects(discover(byChallenge.url), /refusing to send it tokens for another resource/);
    const elsewhere = await world('/.well-known/oauth-protected-resource', () => 'http://127.0.0.1:1');
    await assert.rejects(
      discover(elsewhere.url),
      /names http:\/\/127\.0\.0\.1:1, not .*\/mcp or its origin: refusing to send it tokens for another resource/,
    );
    // The control: the root document naming the upstream's URL itself is still taken.
    const itself = await world('/.well-known/oauth-protected-resource', (origin) => `${origin}/mcp`);
    assert.equal((await discover(itself.url)).resource, itself.url);
  },
);
