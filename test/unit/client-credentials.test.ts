// The client_credentials grant (src/credentials/oauth/client-credentials.ts): the gateway's own service identity at
// an upstream's authorization server, against a small local site that plays the upstream's 401 and metadata, the
// authorization server's metadata and its token endpoint, and records every token request. The client secret goes
// as HTTP Basic, or a key signs an RFC 7523 assertion whose claims are checked here with jose; one token serves
// every caller until shortly before it expires; a 401 drops it and the retry goes out with a new one, once.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, mock, test } from 'node:test';
import { decodeProtectedHeader, exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import type { CallerIdentity, RequestOptions, Upstream, UpstreamStatus } from '../../bridge/upstream.js';
import { errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { silentLog } from '../../infra/log.js';
import { parseConfig } from '../../src/config/config.js';
import { ClientCredentialsSource } from '../../src/credentials/oauth/client-credentials.js';
import type { ClientCredentialsSettings } from '../../src/credentials/settings.js';
import { UpstreamCredentials } from '../../src/gateway/upstream-credentials.js';
import { CredentialedUpstream } from '../../src/layers/credentialed-upstream.js';

interface TokenRequest {
  authorization: string | undefined;
  form: URLSearchParams;
}

let site: Server;
let origin: string;
/** Every request the token endpoint got, in order. */
let asked: TokenRequest[];
/** What the token endpoint answers next: a token living this long, or a refusal. */
let expiresIn: number;
let refuse: boolean;

before(async () => {
  site = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
      if (req.method === 'POST' && req.url === '/mcp')
        return json(
          401,
          {},
          {
            'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
          },
        );
      if (req.url === '/.well-known/oauth-protected-resource/mcp')
        return json(200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
      if (req.url === '/.well-known/oauth-authorization-server')
        return json(200, {
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          code_challenge_methods_supported: ['S256'],
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'],
          token_endpoint_auth_signing_alg_values_supported: ['ES256'],
        });
      if (req.method === 'POST' && req.url === '/token') {
        asked.push({ authorization: req.headers.authorization, form: new URLSearchParams(body) });
        if (refuse) return json(401, { error: 'invalid_client', error_description: 'unknown client' });
        return json(200, { access_token: `t${asked.length}`, token_type: 'Bearer', expires_in: expiresIn });
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
  expiresIn = 3600;
  refuse = false;
});

const SECRET = 'se cret/+:1';
const alice: CallerIdentity = { principal: 'alice' };
const bob: CallerIdentity = { principal: 'bob' };
const CALL: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami' } };

function source(settings: Partial<ClientCredentialsSettings> = {}): ClientCredentialsSource {
  return new ClientCredentialsSource({
    server: 'crm',
    url: `${origin}/mcp`,
    settings: { type: 'clientCredentials', clientId: 'svc', clientSecret: SECRET, scopes: [], ...settings },
  });
}

async function authorizationOf(from: ClientCredentialsSource, caller: CallerIdentity): Promise<string> {
  const obtained = await from.obtain(caller);
  assert.ok('authorization' in obtained, `a token, not ${JSON.stringify(obtained)}`);
  return obtained.authorization;
}

test(
  'client_secret_basic: the token is asked for once, as the client, for the upstream; ' + 'every caller shares it',
  async () => {
    const crm = source({ scopes: ['crm.read'] });
    assert.equal(crm.cached(), undefined, 'nothing is fetched before the first use');
    const [forAlice, forBob] = await Promise.all([authorizationOf(crm, alice), authorizationOf(crm, bob)]);
    assert.equal(forAlice, 'Bearer t1');
    assert.equal(forBob, 'Bearer t1', 'the service identity is the same for every caller');
    assert.equal(asked.length, 1, 'callers arriving together wait for one request');
    const [request] = asked;
    // RFC 6749 §2.3.1: each part form-encoded, then Base64.
    const basic = Buffer.from(request!.authorization!.replace(/^Basic /, ''), 'base64').toString();
    assert.equal(basic, `svc:${new URLSearchParams({ s: SECRET }).toString().slice(2)}`);
    assert.equal(request!.form.get('grant_type'), 'client_credentials');
    assert.equal(request!.form.get('resource'), `${origin}/mcp`, 'RFC 8707: the token is for this upstream');
    assert.equal(request!.form.get('scope'), 'crm.read');
    assert.equal(request!.form.get('client_secret'), null, 'the secret travels in the header only');
    assert.equal(crm.cached(), 'Bearer t1');
    assert.equal(await authorizationOf(crm, alice), 'Bearer t1');
    assert.equal(asked.length, 1, 'a held token costs no request');
  },
);

test(
  'private_key_jwt: ' + 'an RFC 7523 assertion signed with the key, for the authorization server, never reused',
  async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const crm = source({ clientSecret: undefined, privateKey: await exportPKCS8(privateKey) });
    assert.equal(await authorizationOf(crm, alice), 'Bearer t1');
    crm.rejected(alice, 'Bearer t1');
    assert.equal(await authorizationOf(crm, alice), 'Bearer t2');

    const jtis = new Set<unknown>();
    for (const request of asked) {
      assert.equal(request.authorization, undefined, 'no secret, no Basic header');
      assert.equal(request.form.get('grant_type'), 'client_credentials');
      assert.equal(request.form.get('client_id'), null, 'the assertion names the client (ext-auth sends no client_id)');
      assert.equal(request.form.get('client_assertion_type'), 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      const assertion = request.form.get('client_assertion')!;
      assert.equal(decodeProtectedHeader(assertion).alg, 'ES256', "the key's algorithm");
      // jwtVerify checks the signature, iss, sub, aud and that it has not expired.
      const { payload } = await jwtVerify(assertion, publicKey, { issuer: 'svc', subject: 'svc', audience: origin });
      assert.ok(payload.exp! - payload.iat! <= 60, 'short-lived');
      assert.equal(typeof payload.jti, 'string');
      jtis.add(payload.jti);
    }
    assert.equal(jtis.size, 2, 'a fresh jti each time');
  },
);

test('the token is reused until shortly before it expires, then fetched again with client_credentials', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  t.after(() => mock.timers.reset());
  const crm = source();
  assert.equal(await authorizationOf(crm, alice), 'Bearer t1');
  // 30 s before a one-hour token expires it is due (token-lifetime.ts): until then it is used as it is.
  t.mock.timers.tick(3600_000 - 31_000);
  assert.equal(crm.cached(), 'Bearer t1');
  assert.equal(await authorizationOf(crm, bob), 'Bearer t1');
  assert.equal(asked.length, 1);
  t.mock.timers.tick(2_000);
  assert.equal(crm.cached(), undefined, 'due: not sent any more');
  assert.equal(await authorizationOf(crm, bob), 'Bearer t2');
  assert.equal(asked.length, 2);
  assert.equal(asked[1]!.form.get('grant_type'), 'client_credentials', 'no refresh token: the grant again');
  assert.equal(asked[1]!.form.get('refresh_token'), null);
});

/** An upstream that refuses the tokens named in `refused` with HTTP 401, and answers any other; it notes each. */
class RefusingUpstream implements Upstream {
  readonly name = 'crm';
  readonly events = new EventEmitter();
  readonly sent: (string | undefined)[] = [];
  constructor(private readonly refused: (authorization: string | undefined) => boolean) {}
  status(): UpstreamStatus {
    return { state: 'ready', era: 'modern', restarts: 0, lastError: undefined };
  }
  async start(): Promise<void> {}
  async close(): Promise<void> {}
  async request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    this.sent.push(options.authorization);
    if (this.refused(options.authorization))
      return errorResponse(message.id, -32001, 'Unauthorized', { httpStatus: 401 });
    return { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'done' }] } };
  }
}

test('a 401 drops the token; the retry goes out with a new one, once, and a stale 401 drops nothing', async () => {
  const crm = source();
  const upstream = new RefusingUpstream((authorization) => authorization === 'Bearer t1');
  const stack = new CredentialedUpstream(upstream, crm);
  const answer = await stack.request({ ...CALL }, { caller: alice });
  assert.ok('result' in answer, JSON.stringify(answer));
  assert.deepEqual(upstream.sent, ['Bearer t1', 'Bearer t2'], 'refused, then sent again with a new token');
  assert.equal(asked.length, 2);
  // Bob's call that went out with t1 before the refresh comes back refused: the new token stays.
  await crm.rejected(bob, 'Bearer t1');
  assert.equal(crm.cached(), 'Bearer t2');

  const always = new RefusingUpstream(() => true);
  const hopeless = await new CredentialedUpstream(always, crm).request({ ...CALL, id: 2 }, { caller: bob });
  assert.ok('error' in hopeless);
  assert.equal(always.sent.length, 2, 'retried once, not in a loop');
  assert.equal(asked.length, 3);
});

test('the client credentials go to no other authorization server than the one it is registered at', async () => {
  const crm = source({ issuer: 'https://login.example.com' });
  const obtained = await crm.obtain(alice);
  assert.ok('refused' in obtained);
  assert.match(obtained.refused, new RegExp(`names authorization server ${origin}`));
  assert.match(obtained.refused, /servers\.crm\.credentials\.issuer/);
  assert.equal(asked.length, 0, 'nothing was sent to the server the metadata named');
});

test(
  'a refusing token endpoint is told to every caller with its error and the key to check, ' + 'never the secret',
  async () => {
    refuse = true;
    const crm = source();
    const obtained = await crm.obtain(alice);
    assert.ok('refused' in obtained);
    assert.match(obtained.refused, /HTTP 401, invalid_client: unknown client/);
    assert.match(obtained.refused, /check servers\.crm\.credentials/);
    assert.ok(!obtained.refused.includes(SECRET));
    // No connect tool stands in for a list: there is nothing for a caller to connect.
    const list = await new CredentialedUpstream(new RefusingUpstream(() => false), crm).request(
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} },
      { caller: bob },
    );
    assert.ok('error' in list, `the list fails, saying why: ${JSON.stringify(list)}`);
    assert.match(list.error.message, /could not get its own token/);
    refuse = false;
    const next = `Bearer t${asked.length + 1}`;
    assert.equal(await authorizationOf(crm, alice), next, 'asked again on the next call');
  },
);

test('with tokenEndpoint, no discovery: the assertion is for the issuer given, else the endpoint itself', async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const pem = await exportPKCS8(privateKey);
  const direct = new ClientCredentialsSource({
    server: 'billing',
    url: 'https://billing.example.com/v2',
    settings: {
      type: 'clientCredentials',
      clientId: 'svc',
      privateKey: pem,
      tokenEndpoint: `${origin}/token`,
      scopes: [],
    },
  });
  assert.equal(await authorizationOf(direct, alice), 'Bearer t1');
  assert.equal(asked[0]!.form.get('resource'), 'https://billing.example.com/v2');
  await jwtVerify(asked[0]!.form.get('client_assertion')!, publicKey, { audience: `${origin}/token` });
  const named = new ClientCredentialsSource({
    server: 'billing',
    url: 'https://billing.example.com/v2',
    settings: {
      type: 'clientCredentials',
      clientId: 'svc',
      privateKey: pem,
      tokenEndpoint: `${origin}/token`,
      issuer: 'https://login.example.com',
      scopes: [],
    },
  });
  assert.equal(await authorizationOf(named, alice), 'Bearer t2');
  await jwtVerify(asked[1]!.form.get('client_assertion')!, publicKey, { audience: 'https://login.example.com' });
});

test(
  'the wiring: a url: server asks for its URL, an openapi: server for its baseUrl; ' + 'neither needs connecting',
  async () => {
    const service = { type: 'clientCredentials', clientId: 'svc', clientSecret: SECRET };
    const config = parseConfig(
      {
        servers: {
          crm: { url: 'https://crm.example.com/mcp', credentials: service },
          billing: {
            openapi: './billing.yaml',
            baseUrl: 'https://billing.example.com/v2',
            credentials: { ...service, tokenEndpoint: 'https://login.example.com/token' },
          },
        },
      },
      'test.yaml',
      '/srv/gateway',
      {},
    );
    const credentials = await UpstreamCredentials.open(config, silentLog);
    try {
      assert.equal(credentials.store, undefined, 'no per-user store is opened for it');
      for (const [name, url] of [
        ['crm', 'https://crm.example.com/mcp'],
        ['billing', 'https://billing.example.com/v2'],
      ] as const) {
        const made = credentials.sourceFor(name, config.servers[name]!);
        assert.ok(made instanceof ClientCredentialsSource);
        assert.equal(made.options.url, url);
        assert.ok(made.sharedIdentity);
        assert.ok(!credentials.needsConnect(name), 'no connect link, no placeholder');
      }
    } finally {
      await credentials.close();
    }
  },
);

test(
  'an RSA key signs RS256, or PS256 when asked; ' + 'an Ed25519 key EdDSA: each verified with its public key',
  async () => {
    for (const [kind, algorithm, expected] of [
      ['RS256', undefined, 'RS256'],
      ['PS256', 'PS256', 'PS256'],
      ['EdDSA', undefined, 'EdDSA'],
    ] as const) {
      const { publicKey, privateKey } = await generateKeyPair(kind, { extractable: true });
      const direct = source({
        clientSecret: undefined,
        privateKey: await exportPKCS8(privateKey),
        algorithm,
        tokenEndpoint: `${origin}/token`,
        issuer: origin,
      });
      await authorizationOf(direct, alice);
      const assertion = asked.at(-1)!.form.get('client_assertion')!;
      assert.equal(decodeProtectedHeader(assertion).alg, expected);
      await jwtVerify(assertion, publicKey, { issuer: 'svc', subject: 'svc', audience: origin });
    }
  },
);
