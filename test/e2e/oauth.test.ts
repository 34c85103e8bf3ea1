// JWT / OAuth 2.1 resource-server behaviour through the HTTP edge: access tokens signed here with jose
// (RS256 and ES256) and verified by the gateway against a JWKS served by an authorization-server stub on
// 127.0.0.1; the 401/403 challenges and RFC 9728 metadata a client discovers from; the SDK v2 client doing
// the whole client_credentials flow knowing only the gateway's URL; and the caller's token never reaching the
// upstream (an HTTP upstream of our own that records what it receives).
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { base64url, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import type { RunningGateway } from '../../src/gateway.js';
import { startModernHttpServer, type ModernHttpServer } from '../fixtures/http-servers.js';
import { onFreePort } from '../ports.js';
import { headersFor, post, request, schemaProblems, startTestGateway, VERSION } from './harness.js';
import { tempDir } from '../temp.js';

// ---- an authorization server stub: JWKS, RFC 8414 metadata, a client_credentials token endpoint --------

interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  form?: URLSearchParams;
}

interface AuthorizationServer {
  issuer: string;
  jwksUrl: string;
  seen: SeenRequest[];
  /** What the token endpoint puts in the tokens it issues, besides aud (= the `resource` sent) and scope. */
  claims: JWTPayload;
  close(): Promise<void>;
}

const CLIENT_ID = 'gateway-e2e-client';
const CLIENT_SECRET = 'gateway-e2e-secret-0123456789';

async function startAuthorizationServer(
  sign: (claims: JWTPayload) => Promise<string>,
  publicJwks: object,
): Promise<AuthorizationServer> {
  const seen: SeenRequest[] = [];
  const state = { issuer: '', claims: {} as JWTPayload };
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(text);
  };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://stub').pathname;
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const entry: SeenRequest = { method: req.method ?? '', path, headers: req.headers };
      seen.push(entry);
      if (req.method === 'GET' && path === '/jwks') return json(res, 200, publicJwks);
      if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server') {
        return json(res, 200, {
          issuer: state.issuer,
          // The SDK's metadata schema insists on these two even for a client_credentials-only server.
          authorization_endpoint: `${state.issuer}/authorize`,
          response_types_supported: ['code'],
          token_endpoint: `${state.issuer}/token`,
          jwks_uri: `${state.issuer}/jwks`,
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
          scopes_supported: ['mcp'],
        });
      }
      if (req.method === 'POST' && path === '/token') {
        const form = new URLSearchParams(body);
        entry.form = form;
        const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
        if (req.headers.authorization !== basic) return json(res, 401, { error: 'invalid_client' });
        if (form.get('grant_type') !== 'client_credentials') return json(res, 400, { error: 'unsupported_grant_type' });
        const resource = form.get('resource');
        if (!resource) return json(res, 400, { error: 'invalid_target', error_description: 'resource is required' });
        const scope = form.get('scope') ?? '';
        void sign({ sub: CLIENT_ID, ...state.claims, aud: resource, scope }).then((token) =>
          json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 300, scope }),
        );
        return;
      }
      json(res, 404, { error: 'not_found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.issuer = `http://127.0.0.1:${port}`;
  return {
    issuer: state.issuer,
    jwksUrl: `${state.issuer}/jwks`,
    seen,
    get claims() {
      return state.claims;
    },
    set claims(claims: JWTPayload) {
      state.claims = claims;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---- helpers ----------------------------------------------------------------------------------

/** The parameters of a `Bearer` challenge; `scheme` is what precedes them. */
function challengeOf(header: string | null): { scheme: string; params: Record<string, string> } {
  assert.ok(header, 'a WWW-Authenticate header');
  const scheme = header.split(' ', 1)[0]!;
  const params: Record<string, string> = {};
  for (const [, key, value] of header.slice(scheme.length).matchAll(/([A-Za-z_]+)="((?:[^"\\]|\\.)*)"/g))
    params[key!] = value!.replace(/\\(.)/g, '$1');
  return { scheme, params };
}

const withToken = (
  body: { method: string; params?: Record<string, unknown> },
  token: string | undefined,
): Record<string, string> =>
  token === undefined ? headersFor(body) : { ...headersFor(body), authorization: `Bearer ${token}` };

const now = () => Math.floor(Date.now() / 1000);

// ---- the gateway under test ---------------------------------------------------------------------

let rsa: { privateKey: CryptoKey; publicKey: CryptoKey };
let ec: { privateKey: CryptoKey; publicKey: CryptoKey };
let stranger: { privateKey: CryptoKey; publicKey: CryptoKey };
let authServer: AuthorizationServer;
let upstream: ModernHttpServer;
let gateway: RunningGateway;
let resource: string;
let mcp: string;
const tmp = tempDir('mcp-gw-oauth-');
const auditFile = path.join(tmp, 'audit.jsonl');
/** Every token handed to the gateway, to look for in what it writes. */
const issued: string[] = [];

/** A JWT as the stub issues them: by default RS256, for the gateway, scope mcp, subject alice, no groups. */
async function jwt(
  claims: JWTPayload = {},
  how: { alg?: 'RS256' | 'ES256'; key?: CryptoKey; kid?: string } = {},
): Promise<string> {
  const alg = how.alg ?? 'RS256';
  const key = how.key ?? (alg === 'RS256' ? rsa.privateKey : ec.privateKey);
  const payload: JWTPayload = {
    iss: authServer.issuer,
    aud: resource,
    sub: 'alice',
    scope: 'mcp',
    iat: now(),
    exp: now() + 300,
    ...claims,
  };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  const token = await new SignJWT(payload)
    .setProtectedHeader({ alg, kid: how.kid ?? (alg === 'RS256' ? 'rs-1' : 'ec-1'), typ: 'at+jwt' })
    .sign(key);
  issued.push(token);
  return token;
}

before(async () => {
  [rsa, ec, stranger] = await Promise.all([
    generateKeyPair('RS256', { extractable: true }),
    generateKeyPair('ES256', { extractable: true }),
    generateKeyPair('RS256', { extractable: true }),
  ]);
  const publicJwks = {
    keys: [
      { ...(await exportJWK(rsa.publicKey)), kid: 'rs-1', alg: 'RS256', use: 'sig' },
      { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
    ],
  };
  authServer = await startAuthorizationServer((claims) => jwt(claims), publicJwks);
  upstream = await startModernHttpServer();
  // The resource URL names the gateway's own port, so it is chosen before the gateway listens (and tried again
  // on another if some other process takes it in between).
  let port = 0;
  gateway = await onFreePort((free) => {
    port = free;
    resource = `http://127.0.0.1:${port}/`;
    return startTestGateway(
      { a: { url: upstream.url } },
      { port },
      {
        auth: {
          jwt: { issuer: authServer.issuer, jwksUrl: authServer.jwksUrl, algorithms: ['RS256', 'ES256'] },
          oauth: { resource, scopes: ['mcp'] },
        },
        policies: [
          { name: 'everyone', principals: { ids: ['*'] }, allow: { tools: ['a__echo'] } },
          { name: 'support', principals: { groups: ['support'] }, allow: { tools: ['a__pid'] } },
        ],
        audit: { destination: auditFile },
      },
    );
  });
  assert.equal(gateway.url, `http://127.0.0.1:${port}`);
  mcp = `${gateway.url}/mcp`;
});

after(async () => {
  await gateway?.close();
  await upstream?.close();
  await authServer?.close();
  rmSync(tmp, { recursive: true, force: true });
});

// ---- 1. tokens through real HTTP ------------------------------------------------------------------

describe('JWT access tokens at the HTTP edge', () => {
  const call = () => request('tools/call', { name: 'a__echo', arguments: { text: 'hello' } });

  for (const alg of ['RS256', 'ES256'] as const) {
    test(`a good ${alg} token: 200 and the call works`, async () => {
      const body = call();
      const answer = await post(mcp, body, withToken(body, await jwt({}, { alg })));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.result.content, [{ type: 'text', text: 'hello' }]);
      assert.equal(answer.headers.get('www-authenticate'), null);
      assert.ok(
        authServer.seen.some((r) => r.method === 'GET' && r.path === '/jwks'),
        'the gateway fetched the keys from jwksUrl',
      );
    });
  }

  const refused: [string, () => Promise<string>, RegExp][] = [
    ['expired', () => jwt({ iat: now() - 7200, exp: now() - 3600 }), /token expired/],
    ['not yet valid', () => jwt({ nbf: now() + 3600 }), /not yet valid/],
    ['wrong audience', () => jwt({ aud: 'http://127.0.0.1:1/someone-else' }), /wrong audience/],
    ['wrong issuer', () => jwt({ iss: 'https://issuer.invalid' }), /wrong issuer/],
    ['signed by another key (same kid)', () => jwt({}, { key: stranger.privateKey }), /signature did not verify/],
    [
      'signed by another key (unknown kid)',
      () => jwt({}, { key: stranger.privateKey, kid: 'nobody' }),
      /no signing key/,
    ],
    [
      'alg none (hand-crafted)',
      async () => {
        const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
        const payload = base64url.encode(
          JSON.stringify({ iss: authServer.issuer, aud: resource, sub: 'alice', scope: 'mcp', exp: now() + 300 }),
        );
        return `${header}.${payload}.`;
      },
      /none/,
    ],
    [
      'HS256 (a shared secret)',
      () =>
        new SignJWT({ iss: authServer.issuer, aud: resource, sub: 'alice', scope: 'mcp', exp: now() + 300 })
          .setProtectedHeader({ alg: 'HS256', kid: 'rs-1' })
          .sign(new TextEncoder().encode('a-secret-anyone-could-guess-0123')),
      /HS256/,
    ],
  ];
  for (const [name, make, why] of refused) {
    test(`${name}: 401 invalid_token with resource_metadata, and a JSON-RPC error body`, async () => {
      const body = call();
      const answer = await post(mcp, body, withToken(body, await make()));
      assert.equal(answer.status, 401, JSON.stringify(answer.body));
      const { scheme, params } = challengeOf(answer.headers.get('www-authenticate'));
      assert.equal(scheme, 'Bearer');
      assert.equal(params.error, 'invalid_token');
      assert.match(params.error_description ?? '', why);
      assert.equal(params.resource_metadata, `${gateway.url}/.well-known/oauth-protected-resource`);
      assert.equal(params.scope, 'mcp');
      assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(schemaProblems('tools/call', answer.body), []);
      assert.equal(answer.body.error.code, -32600);
      assert.match(answer.body.error.message, why);
      assert.ok(!('result' in answer.body));
    });
  }

  test('no token: 401 with a challenge naming no error, but the metadata and the scope', async () => {
    const body = call();
    const answer = await post(mcp, body, withToken(body, undefined));
    assert.equal(answer.status, 401);
    const { scheme, params } = challengeOf(answer.headers.get('www-authenticate'));
    assert.equal(scheme, 'Bearer');
    assert.equal(params.error, undefined);
    assert.equal(params.error_description, undefined);
    assert.equal(params.resource_metadata, `${gateway.url}/.well-known/oauth-protected-resource`);
    assert.equal(params.scope, 'mcp');
    assert.deepEqual(schemaProblems('tools/call', answer.body), []);
    assert.match(answer.body.error.message, /Authentication required/);
  });

  test('a token without the required scope: 403 insufficient_scope naming the scope', async () => {
    for (const scope of [undefined, 'read write']) {
      const body = call();
      const answer = await post(mcp, body, withToken(body, await jwt({ scope })));
      assert.equal(answer.status, 403, JSON.stringify(answer.body));
      const { scheme, params } = challengeOf(answer.headers.get('www-authenticate'));
      assert.equal(scheme, 'Bearer');
      assert.equal(params.error, 'insufficient_scope');
      assert.equal(params.scope, 'mcp');
      assert.equal(params.resource_metadata, `${gateway.url}/.well-known/oauth-protected-resource`);
      assert.deepEqual(schemaProblems('tools/call', answer.body), []);
      assert.match(answer.body.error.message, /scope/);
    }
  });

  test('the scope may come as scp (an array); other scopes alongside do not matter', async () => {
    const body = call();
    const answer = await post(mcp, body, withToken(body, await jwt({ scope: undefined, scp: ['read', 'mcp'] })));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  });

  test('the groups in a token drive the policies', async () => {
    const list = request('tools/list');
    const support = await jwt({ sub: 'sam', groups: ['support'] });
    const plain = await jwt({ sub: 'pat' });
    const seenBy = async (token: string) => {
      const answer = await post(mcp, list, withToken(list, token));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.result.tools.map((t: { name: string }) => t.name).sort();
    };
    assert.deepEqual(await seenBy(support), ['a__echo', 'a__pid']);
    assert.deepEqual(await seenBy(plain), ['a__echo']);

    const pid = request('tools/call', { name: 'a__pid', arguments: {} });
    const allowed = await post(mcp, pid, withToken(pid, support));
    assert.equal(allowed.status, 200);
    assert.match(allowed.body.result.content[0].text, /^\d+$/);
    const denied = await post(mcp, pid, withToken(pid, plain));
    assert.equal(denied.status, 200);
    assert.equal(denied.body.error.code, -32602);
    assert.equal(denied.body.error.message, 'Unknown tool: a__pid');
  });

  test('a groups claim that is not a list of names refuses the token', async () => {
    const body = call();
    const answer = await post(mcp, body, withToken(body, await jwt({ groups: { admin: true } })));
    assert.equal(answer.status, 401);
    assert.equal(challengeOf(answer.headers.get('www-authenticate')).params.error, 'invalid_token');
  });
});

// ---- 2. RFC 9728 metadata ----------------------------------------------------------------------

describe('Protected Resource Metadata (RFC 9728)', () => {
  test("GET /.well-known/oauth-protected-resource: the configured resource's document", async () => {
    const response = await fetch(`${gateway.url}/.well-known/oauth-protected-resource`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json(;|$)/);
    const document = await response.json();
    assert.equal(document.resource, resource);
    assert.deepEqual(document.authorization_servers, [authServer.issuer]);
    assert.deepEqual(document.scopes_supported, ['mcp']);
    assert.deepEqual(document.bearer_methods_supported, ['header']);
  });

  test(
    'with oauth.resource configured, a per-path URL for another resource is 404 (RFC 9728 §3.3: resource must ' +
      'match the URL)',
    async () => {
      const response = await fetch(`${gateway.url}/.well-known/oauth-protected-resource/mcp`);
      assert.equal(response.status, 404);
      await response.text();
    },
  );

  test('without oauth.resource, the per-path document names the resource at that path on the Host used', async () => {
    const derived = await startTestGateway(
      {},
      {},
      {
        auth: { jwt: { issuer: authServer.issuer, audience: 'gw', jwksUrl: `${authServer.issuer}/jwks` } },
        audit: { destination: path.join(tmp, 'derived-audit.jsonl') },
      },
    );
    try {
      for (const [suffix, expected] of [
        ['', '/'],
        ['/mcp', '/mcp'],
      ]) {
        const response = await fetch(`${derived.url}/.well-known/oauth-protected-resource${suffix}`);
        assert.equal(response.status, 200);
        const document = await response.json();
        assert.equal(document.resource, `${derived.url}${expected}`);
        assert.deepEqual(document.authorization_servers, [authServer.issuer]);
      }
    } finally {
      await derived.close();
    }
  });

  test('needs no credentials, and is not served for other methods', async () => {
    const head = await fetch(`${gateway.url}/.well-known/oauth-protected-resource`, {
      headers: { authorization: 'Bearer garbage' },
    });
    assert.equal(head.status, 200);
    const posted = await fetch(`${gateway.url}/.well-known/oauth-protected-resource`, { method: 'POST', body: '{}' });
    assert.notEqual(posted.status, 200);
  });

  test('without auth.jwt or oauth authorization servers: 404', async () => {
    const plain = await startTestGateway(
      {},
      {},
      {
        auth: { apiKeys: [{ key: 'alice-key-0123456789', principal: 'alice' }] },
        audit: { destination: path.join(tmp, 'plain-audit.jsonl') },
      },
    );
    try {
      for (const suffix of ['', '/mcp']) {
        const response = await fetch(`${plain.url}/.well-known/oauth-protected-resource${suffix}`);
        assert.equal(response.status, 404);
        await response.text();
      }
      // and its challenges name no metadata
      const body = request('tools/list');
      const answer = await post(`${plain.url}/mcp`, body);
      assert.equal(answer.status, 401);
      assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
    } finally {
      await plain.close();
    }
  });
});

// ---- 3. the SDK v2 client's own OAuth flow -------------------------------------------------------

describe('the SDK v2 client discovers the authorization server and gets a token by itself', () => {
  test('client_credentials: 401 → resource metadata → AS metadata → token → tools', async () => {
    authServer.seen.length = 0;
    authServer.claims = { groups: ['support'] };
    const provider = new ClientCredentialsProvider({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      expectedIssuer: authServer.issuer,
    });
    const client = new Client(
      { name: 'oauth-e2e', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: VERSION } } },
    );
    const gatewayRequests: string[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const response = await fetch(input, init);
      if (url.startsWith(gateway.url))
        gatewayRequests.push(`${init?.method ?? 'GET'} ${new URL(url).pathname} ${response.status}`);
      return response;
    };
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcp), { authProvider: provider, fetch: recordingFetch }),
      );
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['a__echo', 'a__pid']);
      const result = await client.callTool({ name: 'a__echo', arguments: { text: 'via oauth' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'via oauth' }]);
    } finally {
      await client.close();
      authServer.claims = {};
    }

    // The client learnt everything from the gateway: a 401, then the metadata its challenge named.
    assert.ok(
      gatewayRequests.some((r) => r.startsWith('POST /mcp 401')),
      gatewayRequests.join('\n'),
    );
    assert.ok(gatewayRequests.includes('GET /.well-known/oauth-protected-resource 200'), gatewayRequests.join('\n'));
    const paths = authServer.seen.map((r) => `${r.method} ${r.path}`);
    assert.ok(paths.includes('GET /.well-known/oauth-authorization-server'), paths.join('\n'));
    const tokenRequests = authServer.seen.filter((r) => r.path === '/token');
    assert.equal(tokenRequests.length, 1, paths.join('\n'));
    const form = tokenRequests[0]!.form!;
    assert.equal(form.get('grant_type'), 'client_credentials');
    // RFC 8707: the client names the gateway (the metadata's resource) as the token's audience.
    assert.equal(form.get('resource'), resource);
    assert.equal(form.get('scope'), 'mcp');
  });
});

// ---- 4. the caller's token stays at the gateway --------------------------------------------------

describe("the caller's credentials never reach the upstream", () => {
  test('an HTTP upstream sees no Authorization header and no trace of the token', async () => {
    const token = await jwt({ sub: 'sam', groups: ['support'] });
    const before = upstream.requests.length;
    for (const body of [
      request('tools/call', { name: 'a__echo', arguments: { text: 'secret-free' } }),
      request('tools/call', { name: 'a__pid', arguments: {} }),
    ]) {
      const answer = await post(mcp, body, withToken(body, token));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.ok('result' in answer.body, JSON.stringify(answer.body));
    }
    const seen = upstream.requests.slice(before);
    assert.ok(seen.length >= 2, `the upstream saw the calls (${seen.length} requests)`);
    const signature = token.split('.')[2]!;
    for (const headers of seen) {
      assert.equal(headers.authorization, undefined, JSON.stringify(headers));
      for (const [name, value] of Object.entries(headers)) {
        assert.ok(!value.includes(signature) && !value.includes(token), `header ${name} carries the caller's token`);
      }
    }
  });
});

// ---- 5. the audit log: every refusal, never a token ------------------------------------------------

describe('the audit log of JWT callers', () => {
  test('refused tokens are deny lines that say why; no line holds a token', async () => {
    await gateway.security.current.audit!.flush();
    const lines = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const denies = lines.filter((l) => l.decision === 'deny').map((l) => l.rule as string);
    for (const why of [
      'token expired',
      'wrong audience',
      'wrong issuer',
      'signature did not verify',
      'no credentials',
      'token lacks scope mcp',
    ]) {
      assert.ok(
        denies.some((rule) => rule.startsWith('authentication: ') && rule.includes(why)),
        `a deny line for "${why}" in ${JSON.stringify(denies)}`,
      );
    }
    const allowedJwt = lines.filter((l) => l.decision === 'allow' && l.via === 'jwt').map((l) => l.principal);
    assert.ok(allowedJwt.includes('sam') && allowedJwt.includes(CLIENT_ID), JSON.stringify(allowedJwt));
    const text = readFileSync(auditFile, 'utf8');
    assert.ok(issued.length > 10);
    for (const token of issued) assert.ok(!text.includes(token.split('.')[2]!), 'a token signature in the audit log');
  });
});
