// An OpenAPI server reached as each caller with type oauth (issue 49): a REST API sends no RFC 9728
// challenge, so the config names the authorization server (credentials.issuer) and the tokens are asked for
// the API's baseUrl (RFC 8707). Real parts: oidc-provider (authorization code + PKCE, refresh tokens, JWT
// access tokens bound to the resource), the Petstore REST fixture recording every Authorization it gets, and
// headless Chromium doing the person's part of the connect link. alice connects through the -32042 error's
// link, bob through URL-mode elicitation; the REST API sees each one's own token, and nothing from a caller
// who has not connected. A 401 from the API refreshes the caller's token and tries once more; a 403
// insufficient_scope asks the caller to grant more; revoking sends them back to the link.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import type { Oidc } from '../fixtures/oidc.js';
import { startRestServer, type RestServer } from '../fixtures/openapi/rest-server.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { request, send } from './harness.js';
import { callToolAs, startOAuthRig, type OAuthRig } from './oauth-rig.js';
import { FIXTURES } from './openapi-kit.js';

const browserNeed = await chromium('the connect flow of an openapi: server in headless Chromium');
const KEYS: Record<string, string> = {
  alice: 'alice-api-key-0123456789abcdef',
  bob: 'bob-api-key-0123456789abcdefgh',
  carol: 'carol-api-key-0123456789abcdef',
};
const CLIENT = { client_id: 'gw-rest', client_secret: 'gw-rest-secret-0123456789' };
const URL_ELICITATION = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } };

describe('an openapi: server with type oauth: each caller connects their own account', {
  skip: browserNeed.skip,
}, () => {
  let rig: OAuthRig<RestServer>;
  let oidc: Oidc;
  let rest: RestServer;
  let gateway: RunningGateway;
  let publicUrl: string;
  /** The API's resource: what every token it gets must be for. */
  let resource: string;

  before(async () => {
    browserNeed.check();
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client: CLIENT,
      upstream: () => startRestServer(),
      config: (at) => ({
        auth: { apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })) },
        credentials: {
          key: 'an-openapi-oauth-key-of-32-bytes-or-more',
          store: 'file',
          file: path.join(tempDir('openapi-oauth-'), 'credentials.json'),
        },
        servers: {
          pets: {
            openapi: path.join(FIXTURES, 'petstore-3.0.yaml'),
            baseUrl: `${at.upstream.url}/v1`,
            credentials: {
              type: 'oauth',
              issuer: at.oidc.issuer,
              clientId: CLIENT.client_id,
              clientSecret: CLIENT.client_secret,
              scopes: ['read'],
            },
          },
        },
      }),
      log: silentLog,
      server: 'pets',
    });
    ({ oidc, gateway, publicUrl, upstream: rest } = rig);
    resource = `${rest.url}/v1`;
  });

  after(() => rig?.close());

  const show = (who: string, petId: string, params: Record<string, unknown> = {}) =>
    callToolAs(`${gateway.url}/servers/pets/mcp`, KEYS[who]!, 'showPetById', { arguments: { petId }, ...params });

  /** The tool names `who` is listed on /mcp. */
  async function toolNames(who: string): Promise<string[]> {
    const listed = await send(`${gateway.url}/mcp`, request('tools/list'), { authorization: `Bearer ${KEYS[who]}` });
    assert.ok(Array.isArray(listed.body.result?.tools), JSON.stringify(listed.body));
    return (listed.body.result.tools as { name: string }[]).map((tool) => tool.name);
  }

  /** The bearer token the REST API got with its last request. */
  function lastToken(): string {
    const sent = String(rest.received.at(-1)?.headers.authorization);
    assert.match(sent, /^Bearer /);
    return sent.slice('Bearer '.length);
  }

  test('a caller not yet connected gets the connect link and the placeholder; the API sees no request', async () => {
    const before = rest.received.length;
    const first = await show('alice', 'Rex');
    assert.equal(first.body.error?.code, -32042, JSON.stringify(first.body));
    assert.ok(first.body.error.data.url.startsWith(`${publicUrl}/connect/`), first.body.error.data.url);
    assert.deepEqual(await toolNames('carol'), ['pets__connect']);
    const placeholder = await callToolAs(`${gateway.url}/mcp`, KEYS.carol!, 'pets__connect');
    assert.equal(placeholder.body.error?.code, -32042, JSON.stringify(placeholder.body));
    assert.equal(rest.received.length, before, 'no request reached the REST API');
  });

  test("alice connects through the error's link; the API sees her own token, for its base URL", async () => {
    const link: string = (await show('alice', 'Rex')).body.error.data.url;
    assert.equal(await rig.connectInBrowser(link, 'alice-at-pets'), 'Connected to pets');
    const answer = await show('alice', 'Rex');
    assert.deepEqual(answer.body.result?.structuredContent, { id: 7, name: 'Rex' }, JSON.stringify(answer.body));
    const claims = await oidc.verify(lastToken(), resource);
    assert.equal(claims.sub, 'alice-at-pets');
    // On /mcp her list is the document's, and a call through it carries her token too.
    const names = await toolNames('alice');
    assert.ok(names.includes('pets__showPetById') && !names.includes('pets__connect'), names.join());
    const onMcp = await callToolAs(`${gateway.url}/mcp`, KEYS.alice!, 'pets__showPetById', {
      arguments: { petId: 'via-mcp' },
    });
    assert.deepEqual(onMcp.body.result?.structuredContent, { id: 7, name: 'via-mcp' }, JSON.stringify(onMcp.body));
    assert.equal((await oidc.verify(lastToken(), resource)).sub, 'alice-at-pets');
  });

  test('bob connects through URL-mode elicitation; each caller goes out as their own account', async () => {
    const before = rest.received.length;
    const asked = await show('bob', 'Fido', { _meta: URL_ELICITATION });
    assert.equal(asked.body.result?.resultType, 'input_required', JSON.stringify(asked.body));
    const [key, question] = Object.entries(asked.body.result.inputRequests)[0] as [
      string,
      { method: string; params: { mode: string; url: string } },
    ];
    assert.equal(question.params.mode, 'url');
    assert.equal(rest.received.length, before, 'no request reached the REST API');
    assert.equal(await rig.connectInBrowser(question.params.url, 'bob-at-pets'), 'Connected to pets');
    const retried = await show('bob', 'Fido', {
      _meta: URL_ELICITATION,
      requestState: asked.body.result.requestState,
      inputResponses: { [key]: { action: 'accept' } },
    });
    assert.deepEqual(retried.body.result?.structuredContent, { id: 7, name: 'Fido' }, JSON.stringify(retried.body));
    assert.equal((await oidc.verify(lastToken(), resource)).sub, 'bob-at-pets');
    assert.equal((await show('alice', 'Rex')).body.result?.isError, false);
    assert.equal((await oidc.verify(lastToken(), resource)).sub, 'alice-at-pets');
    assert.equal((await show('bob', 'Fido')).body.result?.isError, false);
    assert.equal((await oidc.verify(lastToken(), resource)).sub, 'bob-at-pets');
  });

  test("a 401 from the API refreshes the token and tries once more; a second 401 is the caller's error", async () => {
    await show('alice', 'Rex');
    const refused = lastToken();
    rest.refuse.set(`Bearer ${refused}`, { status: 401, challenge: 'Bearer error="invalid_token"' });
    try {
      const before = rest.received.length;
      const answer = await show('alice', 'Rex');
      assert.deepEqual(answer.body.result?.structuredContent, { id: 7, name: 'Rex' }, JSON.stringify(answer.body));
      const sent = rest.received.slice(before).map((got) => String(got.headers.authorization).slice(7));
      assert.equal(sent.length, 2, 'the refused request and the retry');
      assert.equal(sent[0], refused);
      assert.notEqual(sent[1], refused, 'a refreshed token');
      assert.equal((await oidc.verify(sent[1]!, resource)).sub, 'alice-at-pets');
      // Refused again with the fresh token: the caller is told, and the API was asked twice, not more.
      rest.refuse.set('*', { status: 401 });
      const again = rest.received.length;
      const twice = await show('alice', 'Rex');
      assert.match(twice.body.error?.message ?? '', /refused this caller's credential for tools\/call \(HTTP 401\)/);
      assert.equal(twice.body.error.data.httpStatus, 401);
      assert.equal(rest.received.length, again + 2);
    } finally {
      rest.refuse.clear();
    }
  });

  test('a 403 insufficient_scope asks the caller to grant it; any other 403 is the API answering', async () => {
    await show('bob', 'Fido');
    const token = `Bearer ${lastToken()}`;
    rest.refuse.set(token, { status: 403, challenge: 'Bearer error="insufficient_scope", scope="write"' });
    try {
      const stepUp = await show('bob', 'Fido');
      assert.equal(stepUp.body.error?.code, -32042, JSON.stringify(stepUp.body));
      assert.match(stepUp.body.error.message, /needs more access for this call \(scope [^)]*\bwrite\)/);
      rest.refuse.set(token, { status: 403 });
      const forbidden = await show('bob', 'Fido');
      assert.equal(forbidden.body.result?.isError, true, JSON.stringify(forbidden.body));
      assert.match(forbidden.body.result.content[0].text, /HTTP 403 .*refused with 403/);
    } finally {
      rest.refuse.clear();
    }
  });

  test('a caller who revokes the connection is sent to the link again; the API sees no request', async () => {
    const revoked = await fetch(`${gateway.url}/connections/pets`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEYS.alice}` },
    });
    assert.equal(revoked.status, 200);
    const before = rest.received.length;
    assert.equal((await show('alice', 'Rex')).body.error?.code, -32042);
    assert.equal(rest.received.length, before);
    assert.equal((await show('bob', 'Fido')).body.result?.isError, false, 'bob is still connected');
  });
});
