// A server reached with the gateway's own service identity (credentials: type clientCredentials) against a real
// authorization server, oidc-provider: the gateway asks its token endpoint with the client_credentials grant, as a
// client authenticating with a key (private_key_jwt, RFC 7523) or with its secret (client_secret_basic), and the
// REST API behind two openapi: servers sees the same token, issued to the client for its base URL, whichever
// caller calls; a 401 from the API drops the token and the call goes again with a new one. The MCP side of the
// grant (discovery from the server's 401 and metadata) is the conformance suite's: conformance-auth.test.ts.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { silentLog } from '../../infra/log.js';
import { parseConfig } from '../../src/config/config.js';
import { type RunningGateway, startGateway } from '../../src/gateway.js';
import { type Oidc, startOidc } from '../fixtures/oidc.js';
import { type RestServer, startRestServer } from '../fixtures/openapi/rest-server.js';
import { ROOT, request, send } from './harness.js';
import { FIXTURES } from './openapi-kit.js';

const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' };
const SECRET = 'billing-service-secret-0123456789';

describe("servers reached with the gateway's own identity (client_credentials)", () => {
  let oidc: Oidc;
  let rest: RestServer;
  let gateway: RunningGateway;

  before(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    oidc = await startOidc({
      callerAudience: 'http://gateway.test/mcp',
      clients: [
        {
          client_id: 'pets-service',
          token_endpoint_auth_method: 'private_key_jwt',
          jwks: { keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig' }] },
          grant_types: ['client_credentials'],
        },
        { client_id: 'billing-service', client_secret: SECRET, grant_types: ['client_credentials'] },
      ],
    });
    rest = await startRestServer();
    const service = (clientId: string, auth: Record<string, string>) => ({
      openapi: path.join(FIXTURES, 'petstore-3.0.yaml'),
      baseUrl: `${rest.url}/v1`,
      credentials: {
        type: 'clientCredentials',
        tokenEndpoint: oidc.tokenEndpoint,
        issuer: oidc.issuer,
        clientId,
        scopes: ['read'],
        ...auth,
      },
    });
    const config = parseConfig(
      {
        listen: { port: 0 },
        auth: { apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })) },
        servers: {
          pets: service('pets-service', { privateKey: await exportPKCS8(privateKey) }),
          billing: service('billing-service', { clientSecret: SECRET }),
        },
      },
      'test',
      ROOT,
    );
    gateway = await startGateway(config, silentLog);
  });

  after(async () => {
    await gateway?.close();
    await rest?.close();
    await oidc?.close();
  });

  const show = (server: string, who: keyof typeof KEYS, petId: string) =>
    send(`${gateway.url}/servers/${server}/mcp`, request('tools/call', { name: 'showPetById', arguments: { petId } }), {
      authorization: `Bearer ${KEYS[who]}`,
    });
  const lastAuthorization = () => String(rest.received.at(-1)!.headers.authorization);

  for (const [server, client] of [
    ['pets', 'pets-service'],
    ['billing', 'billing-service'],
  ] as const) {
    test(`${server}: every caller's call carries the one token issued to ${client} for the API`, async () => {
      const sent: string[] = [];
      for (const who of ['alice', 'bob'] as const) {
        const answer = await show(server, who, who);
        assert.deepEqual(answer.body.result?.structuredContent, { id: 7, name: who }, JSON.stringify(answer.body));
        sent.push(lastAuthorization());
      }
      assert.match(sent[0]!, /^Bearer /);
      assert.equal(sent[1], sent[0], 'callers share the service identity: one token, fetched once');
      const claims = await oidc.verify(sent[0]!.slice('Bearer '.length), `${rest.url}/v1`);
      assert.equal(claims.client_id, client, 'issued to the client, by the grant it asked with');
      assert.equal(claims.sub, client, 'the client itself: no person behind it');
      assert.equal(claims.scope, 'read');
    });
  }

  test('the API refusing the token (401) drops it: the call goes again with a new one', async () => {
    await show('pets', 'alice', 'a');
    const refused = lastAuthorization();
    rest.refuse.set(refused, { status: 401, challenge: 'Bearer error="invalid_token"' });
    try {
      const answer = await show('pets', 'bob', 'b');
      assert.deepEqual(answer.body.result?.structuredContent, { id: 7, name: 'b' }, JSON.stringify(answer.body));
      const fresh = lastAuthorization();
      assert.notEqual(fresh, refused);
      await oidc.verify(fresh.slice('Bearer '.length), `${rest.url}/v1`);
      await show('pets', 'alice', 'c');
      assert.equal(lastAuthorization(), fresh, 'and every caller uses the new one');
    } finally {
      rest.refuse.clear();
    }
  });
});
