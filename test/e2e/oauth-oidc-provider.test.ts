// The flows of oauth.test.ts (the gateway as an OAuth 2.1 resource server) against a real authorization
// server, oidc-provider, instead of the stub (issue 38, item 8): JWT access tokens it issues with resource
// indicators, verified against its JWKS; the SDK v2 client discovering it from the gateway's 401 and
// metadata and getting a client_credentials token by itself; a token for another resource refused; the
// caller's token never reaching the upstream nor the audit log. The stub stays for the edge cases a real
// server will not produce (odd claims, rotating keys, malformed answers).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../../src/gateway.js';
import { startModernHttpServer, type ModernHttpServer } from '../fixtures/http-servers.js';
import { startOidc, type Oidc } from '../fixtures/oidc.js';
import { tempDir } from '../temp.js';
import { unusedPort } from '../ports.js';
import { headersFor, post, request, startTestGateway, VERSION, send } from './harness.js';

const CLIENT = { client_id: 'mcp-client', client_secret: 'mcp-client-secret-0123456789' };

describe('the gateway as a resource server of oidc-provider', () => {
  let oidc: Oidc;
  let upstream: ModernHttpServer;
  let gateway: RunningGateway;
  let resource: string;
  const auditFile = path.join(tempDir('oauth-oidc-'), 'audit.jsonl');
  const issuedTokens: string[] = [];

  /** A client_credentials token from oidc-provider for `forResource`, as any client would ask for it. */
  async function tokenFor(forResource: string): Promise<string> {
    const response = await fetch(oidc.tokenEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: forResource, scope: 'read' }),
    });
    const json = (await response.json()) as { access_token?: string };
    assert.ok(json.access_token, JSON.stringify(json));
    issuedTokens.push(json.access_token);
    return json.access_token;
  }

  before(async () => {
    const port = await unusedPort();
    resource = `http://127.0.0.1:${port}/mcp`;
    oidc = await startOidc({ clients: [CLIENT], callerAudience: resource });
    upstream = await startModernHttpServer();
    gateway = await startTestGateway(
      { a: { url: upstream.url } },
      { port },
      {
        auth: {
          jwt: { issuer: oidc.issuer, jwksUrl: oidc.jwksUrl },
          oauth: { resource, authorizationServers: [oidc.issuer], scopes: ['read'] },
        },
        audit: { destination: auditFile },
      },
    );
  });

  after(async () => {
    await gateway?.close();
    await upstream?.close();
    await oidc?.close();
  });

  test(
    'a JWT access token oidc-provider issued for the gateway is accepted; ' + 'one for another resource is refused',
    async () => {
      const body = request('tools/call', { name: 'a__echo', arguments: { text: 'hello' } });
      const good = await send(`${gateway.url}/mcp`, body, { authorization: `Bearer ${await tokenFor(resource)}` });
      assert.deepEqual(good.body.result?.content, [{ type: 'text', text: 'hello' }], JSON.stringify(good.body));
      const other = await send(`${gateway.url}/mcp`, body, {
        authorization: `Bearer ${await tokenFor('https://other.example/mcp')}`,
      });
      assert.equal(other.status, 401);
    },
  );

  test('no token: 401 whose challenge names the metadata, which names oidc-provider', async () => {
    const body = request('tools/list');
    const answer = await post(`${gateway.url}/mcp`, body, headersFor(body));
    assert.equal(answer.status, 401);
    const challenge = answer.headers.get('www-authenticate') ?? '';
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    assert.ok(metadataUrl, challenge);
    const metadata = (await (await fetch(metadataUrl)).json()) as { resource: string; authorization_servers: string[] };
    assert.equal(metadata.resource, resource);
    assert.deepEqual(metadata.authorization_servers, [oidc.issuer]);
  });

  test(
    'the SDK v2 client discovers oidc-provider from the gateway and gets a client_credentials token ' + 'by itself',
    async () => {
      const provider = new ClientCredentialsProvider({
        clientId: CLIENT.client_id,
        clientSecret: CLIENT.client_secret,
        expectedIssuer: oidc.issuer,
      });
      const client = new Client(
        { name: 'oauth-oidc-e2e', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: VERSION } } },
      );
      try {
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { authProvider: provider }),
        );
        const { tools } = await client.listTools();
        assert.ok(tools.some((tool) => tool.name === 'a__echo'));
        const result = await client.callTool({ name: 'a__echo', arguments: { text: 'via oidc-provider' } });
        assert.deepEqual(result.content, [{ type: 'text', text: 'via oidc-provider' }]);
        const token = (await provider.tokens())?.access_token;
        assert.ok(token);
        issuedTokens.push(token);
        assert.equal(
          (await oidc.verify(token, resource)).client_id,
          CLIENT.client_id,
          'a JWT for the gateway, from oidc-provider',
        );
      } finally {
        await client.close();
      }
    },
  );

  test("the caller's token reaches neither the upstream nor the audit log", async () => {
    assert.ok(issuedTokens.length >= 3);
    for (const headers of upstream.requests) assert.equal(headers.authorization, undefined);
    const seen = JSON.stringify(upstream.requests);
    const audit = readFileSync(auditFile, 'utf8');
    assert.match(audit, /"principal":"mcp-client"|"via":"jwt"/);
    for (const token of issuedTokens) {
      assert.ok(!seen.includes(token));
      assert.ok(!audit.includes(token));
    }
  });
});
