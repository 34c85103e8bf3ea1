// Enterprise-managed authorization (tokenExchange with idJag, src/credentials/token-exchange.ts and
// src/credentials/oauth/id-jag.ts), against a small local site playing three parts: the enterprise IdP's token
// endpoint (RFC 8693: the caller's ID token for an ID-JAG), the upstream's 401 and metadata, and its authorization
// server's metadata and token endpoint (RFC 7523 jwt-bearer: the ID-JAG for the upstream's token). Every token
// request is recorded: the parameters of each step, the per-caller cache, and the refusals.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, test } from 'node:test';
import type { CallerIdentity } from '../../bridge/upstream.js';
import { parseConfig } from '../../src/config/config.js';
import type { TokenExchangeSettings } from '../../src/credentials/settings.js';
import { TokenExchanger } from '../../src/credentials/token-exchange.js';

interface TokenRequest {
  at: 'idp' | 'as';
  authorization: string | undefined;
  form: URLSearchParams;
}

let site: Server;
let origin: string;
let asked: TokenRequest[];
/** What the IdP answers as issued_token_type; what the authorization server's metadata names as its issuer. */
let issuedType: string | undefined;
let issuer: string;
let asRefuses: boolean;

before(async () => {
  site = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
      const form = new URLSearchParams(body);
      if (req.method === 'POST' && req.url === '/idp/token') {
        asked.push({ at: 'idp', authorization: req.headers.authorization, form });
        const jag = `jag-for-${form.get('subject_token')}-${asked.length}`;
        return json(200, { access_token: jag, issued_token_type: issuedType, token_type: 'N_A', expires_in: 300 });
      }
      if (req.method === 'POST' && req.url === '/mcp')
        return json(
          401,
          {},
          { 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` },
        );
      if (req.url === '/.well-known/oauth-protected-resource/mcp')
        return json(200, { resource: `${origin}/mcp`, authorization_servers: [issuer] });
      if (
        req.url === '/.well-known/oauth-authorization-server' ||
        req.url === '/.well-known/oauth-authorization-server/moved'
      )
        return json(200, {
          issuer,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/as/token`,
          code_challenge_methods_supported: ['S256'],
          grant_types_supported: ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
        });
      if (req.method === 'POST' && req.url === '/as/token') {
        asked.push({ at: 'as', authorization: req.headers.authorization, form });
        if (asRefuses) return json(400, { error: 'invalid_grant', error_description: 'audience mismatch' });
        return json(200, { access_token: `up-${form.get('assertion')}`, token_type: 'Bearer', expires_in: 3600 });
      }
      json(404, {});
    });
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => site.close(() => resolve())));
beforeEach(() => {
  asked = [];
  issuedType = 'urn:ietf:params:oauth:token-type:id-jag';
  issuer = origin;
  asRefuses = false;
});

const alice: CallerIdentity = { principal: 'alice', token: 'alice-id-token' };
const bob: CallerIdentity = { principal: 'bob', token: 'bob-id-token' };

function exchanger(idJag: Partial<NonNullable<TokenExchangeSettings['idJag']>> = {}): TokenExchanger {
  return new TokenExchanger(
    'crm',
    {
      type: 'tokenExchange',
      tokenEndpoint: `${origin}/idp/token`,
      clientId: 'gw-at-idp',
      clientSecret: 'idp-secret',
      authMethod: 'client_secret_basic',
      scopes: [],
      renewBeforeMs: 30_000,
      idJag: { clientId: 'gw-at-crm', clientSecret: 'crm secret', authMethod: 'client_secret_basic', ...idJag },
    },
    `${origin}/mcp`,
  );
}

const basic = (header: string | undefined) => Buffer.from(header!.replace(/^Basic /, ''), 'base64').toString();

test(
  "the ID token becomes an ID-JAG for the upstream's authorization server, " + 'presented there with jwt-bearer',
  async () => {
    const crm = exchanger();
    const obtained = await crm.obtain(alice);
    assert.deepEqual(obtained, { authorization: 'Bearer up-jag-for-alice-id-token-1' });
    const [idp, as] = asked;
    assert.equal(idp!.at, 'idp');
    assert.equal(idp!.form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:token-exchange');
    assert.equal(idp!.form.get('subject_token'), 'alice-id-token');
    assert.equal(idp!.form.get('subject_token_type'), 'urn:ietf:params:oauth:token-type:id_token');
    assert.equal(idp!.form.get('requested_token_type'), 'urn:ietf:params:oauth:token-type:id-jag');
    assert.equal(idp!.form.get('audience'), origin, "the ID-JAG's audience: the upstream's authorization server");
    assert.equal(idp!.form.get('resource'), `${origin}/mcp`, 'and the upstream as the resource');
    assert.equal(basic(idp!.authorization), 'gw-at-idp:idp-secret', "the gateway's client at the IdP");
    assert.equal(as!.at, 'as');
    assert.equal(as!.form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
    assert.equal(as!.form.get('assertion'), 'jag-for-alice-id-token-1');
    assert.equal(basic(as!.authorization), 'gw-at-crm:crm+secret', "client_secret_basic as the upstream's client");
    assert.equal(as!.form.get('client_secret'), null);
    assert.equal(asked.length, 2);
  },
);

test(
  'each caller gets their own token, kept until it is due; ' + 'another ID token from the same caller exchanges again',
  async () => {
    const crm = exchanger();
    const [forAlice, forBob, again] = await Promise.all([crm.obtain(alice), crm.obtain(bob), crm.obtain(alice)]);
    assert.deepEqual(forAlice, again, 'callers arriving together share one exchange');
    assert.notDeepEqual(forAlice, forBob);
    assert.equal(asked.filter((r) => r.at === 'idp').length, 2, 'one exchange per caller');
    assert.equal(crm.cached(alice), (forAlice as { authorization: string }).authorization);
    assert.equal(crm.cached(bob), (forBob as { authorization: string }).authorization);
    assert.equal(crm.cached({ principal: 'alice', token: 'a-newer-id-token' }), undefined);
    crm.rejected(alice, (forAlice as { authorization: string }).authorization);
    assert.equal(crm.cached(alice), undefined, 'a refused token is exchanged again');
    assert.equal(crm.cached(bob), (forBob as { authorization: string }).authorization, "bob's stays");
  },
);

test('an IdP answering with anything but an ID-JAG: nothing goes to the authorization server', async () => {
  issuedType = 'urn:ietf:params:oauth:token-type:access_token';
  const obtained = await exchanger().obtain(alice);
  assert.ok('refused' in obtained);
  assert.match(obtained.refused, /servers\.crm: .*not an ID-JAG.*check servers\.crm\.credentials/);
  assert.deepEqual(
    asked.map((r) => r.at),
    ['idp'],
  );
});

test('the ID-JAG goes to no authorization server but the configured one', async () => {
  issuer = `${origin}/moved`;
  const obtained = await exchanger({ issuer: origin }).obtain(alice);
  assert.ok('refused' in obtained);
  assert.match(obtained.refused, /names authorization server .*\/moved.*idJag\.issuer/);
  assert.equal(asked.length, 0, 'not even the IdP is asked for an ID-JAG for it');
});

test("the authorization server's refusal names it and the config key", async () => {
  asRefuses = true;
  const obtained = await exchanger().obtain(alice);
  assert.ok('refused' in obtained);
  assert.match(obtained.refused, /authorization server .* refused the ID-JAG: .*invalid_grant.*audience mismatch/);
  assert.match(obtained.refused, /check servers\.crm\.credentials/);
});

test('a caller without a JWT is refused, naming auth.jwt', async () => {
  const obtained = await exchanger().obtain({ principal: 'keyholder' });
  assert.ok('refused' in obtained);
  assert.match(obtained.refused, /auth\.jwt/);
  assert.equal(asked.length, 0);
});

test('config: idJag needs its client secret and a url: server, and refuses an audience of its own', () => {
  const load = (
    credentials: Record<string, unknown>,
    server: Record<string, unknown> = { url: 'https://crm.example.com/mcp' },
  ) =>
    parseConfig(
      {
        auth: { jwt: { issuer: 'https://idp.example.com', audience: 'gw', jwksUrl: 'https://idp.example.com/jwks' } },
        servers: {
          crm: {
            ...server,
            credentials: {
              type: 'tokenExchange',
              tokenEndpoint: 'https://idp.example.com/token',
              clientId: 'gw',
              clientSecret: 's',
              ...credentials,
            },
          },
        },
      },
      'test',
      '/',
    );
  assert.ok(load({ idJag: { clientId: 'c', clientSecret: 's' } }));
  assert.throws(() => load({ idJag: { clientId: 'c' } }), /idJag\.clientSecret/);
  assert.throws(
    () => load({ audience: 'x', idJag: { clientId: 'c', clientSecret: 's' } }),
    /credentials\.audience: with idJag/,
  );
  const rest = { openapi: 'https://crm.example.com/openapi.json', baseUrl: 'https://crm.example.com/api' };
  assert.throws(() => load({ idJag: { clientId: 'c', clientSecret: 's' } }, rest), /credentials\.idJag: .*url: server/);
  assert.throws(
    () => load({ idJag: { clientId: 'c', clientSecret: 's', issuer: 'http://as.example.com' } }),
    /idJag\.issuer.*https/,
  );
});
