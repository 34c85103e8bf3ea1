// An OpenAPI server reached as each caller (credentials: type tokenExchange): oidc-provider exchanges each
// caller's verified JWT for a token for the REST API, and the REST server sees each caller's own token; a 401
// from the API drops the exchanged token. Type oauth on an openapi: server: openapi-oauth.test.ts.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { startOidc, type Oidc } from '../fixtures/oidc.js';
import { startRestServer, type RestServer } from '../fixtures/openapi/rest-server.js';
import { request, ROOT, send } from './harness.js';
import { FIXTURES } from './openapi-kit.js';

const GATEWAY_RESOURCE = 'http://gateway.test/mcp';
const CLIENT = { client_id: 'gw', client_secret: 'gw-secret-0123456789abcdef' };

describe('an OpenAPI server reached as each caller', () => {
  let oidc: Oidc;
  let rest: RestServer;
  let gateway: RunningGateway;
  const callerTokens = new Map<string, string>();

  before(async () => {
    oidc = await startOidc({ clients: [CLIENT], callerAudience: GATEWAY_RESOURCE });
    rest = await startRestServer();
    for (const who of ['alice', 'bob']) callerTokens.set(who, await oidc.signCaller(who));
    const config = parseConfig(
      {
        listen: { port: 0 },
        auth: { jwt: { issuer: oidc.issuer, jwksUrl: oidc.jwksUrl, audience: GATEWAY_RESOURCE } },
        servers: {
          pets: {
            openapi: path.join(FIXTURES, 'petstore-3.0.yaml'),
            baseUrl: `${rest.url}/v1`,
            credentials: {
              type: 'tokenExchange',
              tokenEndpoint: oidc.tokenEndpoint,
              clientId: CLIENT.client_id,
              clientSecret: CLIENT.client_secret,
            },
          },
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

  test('alice and bob each reach the REST API with their own exchanged token', async () => {
    for (const who of ['alice', 'bob']) {
      const answer = await send(
        `${gateway.url}/servers/pets/mcp`,
        request('tools/call', { name: 'showPetById', arguments: { petId: who } }),
        { authorization: `Bearer ${callerTokens.get(who)}` },
      );
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.result?.structuredContent, { id: 7, name: who }, JSON.stringify(answer.body));
      const sent = String(rest.received.at(-1)!.headers.authorization);
      assert.match(sent, /^Bearer /);
      const token = sent.slice('Bearer '.length);
      assert.notEqual(token, callerTokens.get(who), 'the caller’s own token is not passed through');
      const claims = decodeJwt(token);
      assert.equal(claims.sub, who);
      assert.equal(claims.aud, `${rest.url}/v1`);
    }
    // On /mcp too, once the caller's list is read (a server reached as each caller lists per caller).
    const bob = { authorization: `Bearer ${callerTokens.get('bob')}` };
    const listed = await send(`${gateway.url}/mcp`, request('tools/list'), bob);
    assert.ok(listed.body.result.tools.some((tool: { name: string }) => tool.name === 'pets__showPetById'));
    const onMcp = await send(
      `${gateway.url}/mcp`,
      request('tools/call', { name: 'pets__showPetById', arguments: { petId: 'via-mcp' } }),
      bob,
    );
    assert.deepEqual(onMcp.body.result?.structuredContent, { id: 7, name: 'via-mcp' }, JSON.stringify(onMcp.body));
    assert.equal(decodeJwt(String(rest.received.at(-1)!.headers.authorization).slice(7)).sub, 'bob');
    assert.deepEqual(
      oidc.exchanges.map((exchange) => exchange.sub),
      ['alice', 'bob'],
    );
  });

  test('the API refusing an exchanged token (401) drops it and exchanges again', async () => {
    const alice = { authorization: `Bearer ${callerTokens.get('alice')}` };
    const show = () =>
      send(
        `${gateway.url}/servers/pets/mcp`,
        request('tools/call', { name: 'showPetById', arguments: { petId: 'a' } }),
        alice,
      );
    await show();
    const refused = String(rest.received.at(-1)!.headers.authorization);
    rest.refuse.set(refused, { status: 401, challenge: 'Bearer error="invalid_token"' });
    try {
      const exchanged = oidc.exchanges.length;
      const answer = await show();
      assert.deepEqual(answer.body.result?.structuredContent, { id: 7, name: 'a' }, JSON.stringify(answer.body));
      assert.notEqual(String(rest.received.at(-1)!.headers.authorization), refused);
      assert.equal(oidc.exchanges.length, exchanged + 1, 'exchanged again');
    } finally {
      rest.refuse.clear();
    }
  });
});
