import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  base64url,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  importPKCS8,
  SignJWT,
  type CryptoKey,
  type JWTPayload,
} from 'jose';
import { silentLog } from '../../infra/log.js';
import { ApiKeys, sha256Hex } from '../../policy/api-keys.js';
import { Authenticator, type AuthFailure, type AuthResult } from '../../policy/authenticate.js';
import { looksLikeJwt } from '../../policy/jwt.js';
import { ANONYMOUS_PRINCIPAL } from '../../policy/principal.js';
import { protectedResourceMetadata, resourceMetadataUrl } from '../../policy/resource-metadata.js';
import type { AuthSetting, JwtSetting } from '../../policy/settings.js';
import { bearerChallenge, quotedString } from '../../policy/www-authenticate.js';
import { tempDir } from '../temp.js';
import { recordingLog } from '../recording-log.js';

const ISSUER = 'https://issuer.example';
const AUDIENCE = 'https://gw.example.com/';
const API_KEY = 'test-key-0123456789';

// A test-only EC P-256 key and a self-signed certificate for it, made with openssl for the X.509 case.
const CERT_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgXRDi1UpmPnHsUp1C
HttTi8f5rMyazrRy+1n0oE4RhaOhRANCAASMgh57kZEaSfTY+8g24yVedhsZil+j
YeufcJyRx4peefW6umS9Gp8aDNGLbj4X8zPXI3XzGTtEMYiEQJqEinZJ
-----END PRIVATE KEY-----
`;
const CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIBjTCCATOgAwIBAgIUYywcbp0w7w2+ODl4N5sRMTuRQgwwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQbWNwLWdhdGV3YXktdGVzdDAgFw0yNjEyMDIxNTUxMzdaGA8y
MTI2MTEwODE1NTEzN1owGzEZMBcGA1UEAwwQbWNwLWdhdGV3YXktdGVzdDBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABIyCHnuRkRpJ9Nj7yDbjJV52GxmKX6Nh659w
nJHHil559bq6ZL0anxoM0YtuPhfzM9cjdfMZO0QxiIRAmoSKdkmjUzBRMB0GA1Ud
DgQWBBS38PSdYHA9l8jAiL/Zn0R3c5avcDAfBgNVHSMEGDAWgBS38PSdYHA9l8jA
iL/Zn0R3c5avcDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQDi
7oSk9Z3fMeI1ik7hr/LHGceSOahFAgbrdHj5ga9kSwIgFRm8Qv+ltT+SUzoBEJug
zJ5RgyIAJfw/GxEpBIltmis=
-----END CERTIFICATE-----
`;

interface KeyPair {
  publicKey: CryptoKey;
  privateKey: CryptoKey;
}

let dir: string;
let rsa: KeyPair;
let ec: KeyPair;
let stranger: KeyPair;
let jwksFile: string;

before(async () => {
  dir = tempDir('policy-auth-');
  rsa = await generateKeyPair('RS256', { extractable: true });
  ec = await generateKeyPair('ES256', { extractable: true });
  stranger = await generateKeyPair('RS256', { extractable: true });
  jwksFile = join(dir, 'jwks.json');
  await writeFile(jwksFile, JSON.stringify(await jwksOf()));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function jwksOf(): Promise<{ keys: object[] }> {
  return {
    keys: [
      { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
      { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
    ],
  };
}

interface TokenOptions {
  alg?: string;
  kid?: string;
  key?: CryptoKey | Uint8Array;
  claims?: JWTPayload;
  issuer?: string;
  audience?: string | string[];
  /** Seconds from now; null leaves `exp` out. */
  expiresIn?: number | null;
  notBeforeIn?: number;
}

function sign(options: TokenOptions = {}): Promise<string> {
  const alg = options.alg ?? 'RS256';
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ sub: 'alice', ...options.claims })
    .setProtectedHeader({ alg, kid: options.kid ?? (alg === 'ES256' ? 'ec-1' : 'rsa-1') })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt(now);
  if (options.expiresIn !== null) jwt.setExpirationTime(now + (options.expiresIn ?? 300));
  if (options.notBeforeIn !== undefined) jwt.setNotBefore(now + options.notBeforeIn);
  return jwt.sign(options.key ?? (alg === 'ES256' ? ec.privateKey : rsa.privateKey));
}

function jwtSetting(overrides: Partial<JwtSetting> = {}): JwtSetting {
  return {
    issuer: ISSUER,
    audience: [AUDIENCE],
    jwksFile,
    algorithms: ['RS256', 'ES256'],
    principalClaim: 'sub',
    groupsClaim: 'groups',
    clockToleranceSec: 0,
    ...overrides,
  };
}

function authSetting(overrides: Partial<AuthSetting> = {}): AuthSetting {
  return {
    anonymous: false,
    apiKeys: [{ sha256: sha256Hex(API_KEY), principal: 'ci-bot', groups: ['automation'] }],
    jwt: jwtSetting(),
    oauth: { resource: AUDIENCE, authorizationServers: [], scopes: [] },
    ...overrides,
  };
}

async function authenticate(setting: AuthSetting, header: string | undefined): Promise<AuthResult> {
  const authenticator = await Authenticator.create(setting, silentLog);
  return authenticator.authenticate(header);
}

function refusal(result: AuthResult): AuthFailure {
  assert.equal(result.ok, false, `expected a refusal, got ${JSON.stringify(result)}`);
  return result as AuthFailure;
}

async function jwtRefusal(token: string, setting = authSetting()): Promise<string> {
  const failure = refusal(await authenticate(setting, `Bearer ${token}`));
  assert.equal(failure.status, 401);
  assert.equal(failure.error, 'invalid_token');
  assert.ok(!failure.reason.includes(token), 'the reason must not echo the token');
  return failure.reason;
}

describe('API keys', () => {
  test('sha256Hex is lower-case hex SHA-256', () => {
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  test('a configured key authenticates synchronously as its principal', async () => {
    const authenticator = await Authenticator.create(authSetting(), silentLog);
    const result = authenticator.authenticate(`Bearer ${API_KEY}`);
    assert.ok(!(result instanceof Promise), 'API key lookup must not cost a Promise');
    assert.deepEqual(result, {
      ok: true,
      principal: { id: 'ci-bot', groups: ['automation'], scopes: [], via: 'api-key' },
    });
  });

  test('the scheme is case-insensitive', async () => {
    const result = await authenticate(authSetting(), `bearer ${API_KEY}`);
    assert.equal(result.ok && result.principal.id, 'ci-bot');
  });

  test('an unknown key is refused as invalid_token without echoing it', async () => {
    const authenticator = await Authenticator.create(authSetting(), silentLog);
    const result = authenticator.authenticate('Bearer not-a-key');
    assert.ok(!(result instanceof Promise));
    assert.deepEqual(result, { ok: false, status: 401, error: 'invalid_token', reason: 'unknown API key' });
  });

  test('digests are matched whatever their case; malformed or repeated digests are config errors', () => {
    const keys = new ApiKeys([{ sha256: sha256Hex(API_KEY).toUpperCase(), principal: 'p', groups: [] }]);
    assert.equal(keys.lookup(API_KEY)?.id, 'p');
    assert.equal(keys.lookup('other'), undefined);
    assert.throws(() => new ApiKeys([{ sha256: 'abc', principal: 'p', groups: [] }]), /auth\.apiKeys\[0\]\.sha256/);
    const twice = { sha256: sha256Hex(API_KEY), principal: 'p', groups: [] };
    assert.throws(
      () => new ApiKeys([twice, { ...twice, principal: 'q' }]),
      /auth\.apiKeys\[1\].*repeats the key of principal "p"/,
    );
  });

  test('API keys are not subject to required scopes', async () => {
    const result = await authenticate(
      authSetting({ oauth: { resource: AUDIENCE, authorizationServers: [], scopes: ['mcp:tools'] } }),
      `Bearer ${API_KEY}`,
    );
    assert.equal(result.ok, true);
  });
});

describe('JWT', () => {
  test('a good RS256 token gives its principal, groups and scopes', async () => {
    const token = await sign({ claims: { groups: ['eng', 'ops'], scope: 'mcp:tools  mcp:read' } });
    const result = await authenticate(authSetting(), `Bearer ${token}`);
    assert.deepEqual(result, {
      ok: true,
      principal: { id: 'alice', groups: ['eng', 'ops'], scopes: ['mcp:tools', 'mcp:read'], via: 'jwt' },
    });
  });

  test('a good ES256 token with groups as a string and scopes in scp', async () => {
    const token = await sign({ alg: 'ES256', claims: { groups: 'eng ops', scp: ['a', 'b'] } });
    const result = await authenticate(authSetting(), `Bearer ${token}`);
    assert.deepEqual(result, {
      ok: true,
      principal: { id: 'alice', groups: ['eng', 'ops'], scopes: ['a', 'b'], via: 'jwt' },
    });
  });

  test('a missing groups claim means no groups; a custom principal claim is used', async () => {
    const token = await sign({ claims: { email: 'alice@example.com' } });
    const result = await authenticate(authSetting({ jwt: jwtSetting({ principalClaim: 'email' }) }), `Bearer ${token}`);
    assert.deepEqual(result.ok && result.principal, { id: 'alice@example.com', groups: [], scopes: [], via: 'jwt' });
  });

  test('an audience array is accepted when it names one of ours', async () => {
    const token = await sign({ audience: ['https://other.example', AUDIENCE] });
    assert.equal((await authenticate(authSetting(), `Bearer ${token}`)).ok, true);
  });

  test('an expired token is refused, unless within the clock tolerance', async () => {
    const token = await sign({ expiresIn: -10 });
    assert.equal(await jwtRefusal(token), 'token expired');
    const tolerant = authSetting({ jwt: jwtSetting({ clockToleranceSec: 60 }) });
    assert.equal((await authenticate(tolerant, `Bearer ${token}`)).ok, true);
  });

  test('a token without exp is refused', async () => {
    assert.equal(await jwtRefusal(await sign({ expiresIn: null })), 'missing required "exp" claim');
  });

  test('a token not yet valid is refused', async () => {
    assert.match(await jwtRefusal(await sign({ notBeforeIn: 120 })), /not yet valid/);
  });

  test('a wrong audience is refused', async () => {
    assert.equal(
      await jwtRefusal(await sign({ audience: 'https://other.example' })),
      `wrong audience: expected ${AUDIENCE}`,
    );
  });

  test('a wrong issuer is refused', async () => {
    assert.equal(await jwtRefusal(await sign({ issuer: 'https://evil.example' })), `wrong issuer: expected ${ISSUER}`);
  });

  test('a token signed by another key under our kid is refused', async () => {
    assert.equal(await jwtRefusal(await sign({ key: stranger.privateKey })), 'signature did not verify');
  });

  test('a token naming an unknown kid is refused', async () => {
    assert.match(await jwtRefusal(await sign({ kid: 'nobody' })), /no signing key matches/);
  });

  test('an unsecured token (alg none) is refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const payload = base64url.encode(JSON.stringify({ sub: 'mallory', iss: ISSUER, aud: AUDIENCE, exp: now + 300 }));
    const token = `${header}.${payload}.`;
    assert.equal(looksLikeJwt(token), true);
    assert.equal(await jwtRefusal(token), 'unsecured token (alg "none") refused');
  });

  test('an algorithm outside the allow-list (HS256) is refused', async () => {
    const secret = new TextEncoder().encode('a-shared-secret-of-32-bytes-long!');
    const reason = await jwtRefusal(await sign({ alg: 'HS256', kid: 'rsa-1', key: secret }));
    assert.equal(reason, 'algorithm "HS256" not allowed (allowed: RS256, ES256)');
  });

  test('an allowed algorithm family the config omits is refused (ES256 when only RS256 is allowed)', async () => {
    const reason = await jwtRefusal(
      await sign({ alg: 'ES256' }),
      authSetting({ jwt: jwtSetting({ algorithms: ['RS256'] }) }),
    );
    assert.match(reason, /algorithm "ES256" not allowed/);
  });

  test('a missing or empty principal claim is refused', async () => {
    assert.match(await jwtRefusal(await sign({ claims: { sub: undefined } })), /principal claim "sub" is missing/);
    assert.match(await jwtRefusal(await sign({ claims: { sub: '' } })), /principal claim "sub"/);
    assert.match(
      await jwtRefusal(await sign({ claims: { sub: 42 } as unknown as JWTPayload })),
      /principal claim "sub"/,
    );
  });

  test('a malformed groups claim refuses the token rather than dropping groups', async () => {
    assert.match(await jwtRefusal(await sign({ claims: { groups: ['eng', 7] } })), /groups claim "groups"/);
  });

  test('a garbled JWT is refused as malformed', async () => {
    assert.match(await jwtRefusal('abc.def.ghi'), /^malformed token/);
  });

  test('a JWT-shaped token is an unknown API key when no JWT issuer is configured', async () => {
    const token = await sign();
    const result = await authenticate(authSetting({ jwt: undefined }), `Bearer ${token}`);
    assert.equal(refusal(result).reason, 'unknown API key');
  });

  test('a token lacking a required scope is refused with 403 insufficient_scope', async () => {
    const setting = authSetting({
      oauth: { resource: AUDIENCE, authorizationServers: [], scopes: ['mcp:tools', 'mcp:admin'] },
    });
    const lacking = refusal(await authenticate(setting, `Bearer ${await sign({ claims: { scope: 'mcp:tools' } })}`));
    assert.deepEqual(lacking, {
      ok: false,
      status: 403,
      error: 'insufficient_scope',
      reason: 'token lacks scope mcp:admin',
    });
    const enough = await authenticate(setting, `Bearer ${await sign({ claims: { scope: 'mcp:admin mcp:tools' } })}`);
    assert.equal(enough.ok, true);
  });
});

describe('JWT key sources', () => {
  test('a PEM public key file verifies tokens for the algorithm it fits', async () => {
    const pemFile = join(dir, 'rsa.pem');
    await writeFile(pemFile, await exportSPKI(rsa.publicKey));
    const setting = authSetting({ jwt: jwtSetting({ jwksFile: undefined, publicKeyFile: pemFile }) });
    const result = await authenticate(setting, `Bearer ${await sign()}`);
    assert.equal(result.ok && result.principal.id, 'alice');
    // ES256 is allowed, but an RSA key cannot verify it.
    assert.match(await jwtRefusal(await sign({ alg: 'ES256' }), setting), /no signing key matches/);
    assert.equal(await jwtRefusal(await sign({ key: stranger.privateKey }), setting), 'signature did not verify');
  });

  test('an X.509 certificate file verifies tokens signed by its key', async () => {
    const certFile = join(dir, 'cert.pem');
    await writeFile(certFile, CERTIFICATE);
    const setting = authSetting({
      jwt: jwtSetting({ jwksFile: undefined, publicKeyFile: certFile, algorithms: ['ES256'] }),
    });
    const key = await importPKCS8(CERT_PRIVATE_KEY, 'ES256');
    const result = await authenticate(setting, `Bearer ${await sign({ alg: 'ES256', key })}`);
    assert.equal(result.ok && result.principal.id, 'alice');
    assert.equal(await jwtRefusal(await sign({ alg: 'ES256' }), setting), 'signature did not verify');
  });

  test('unreadable or unsuitable key files fail creation with the config key and a fix', async () => {
    const create = (jwt: JwtSetting) => Authenticator.create(authSetting({ jwt }), silentLog);
    await assert.rejects(
      create(jwtSetting({ jwksFile: join(dir, 'missing.json') })),
      /auth\.jwt\.jwksFile .*missing\.json cannot be read \(ENOENT\)/,
    );
    const notJson = join(dir, 'not.json');
    await writeFile(notJson, '{ nope');
    await assert.rejects(create(jwtSetting({ jwksFile: notJson })), /auth\.jwt\.jwksFile .* is not JSON/);
    const privateJwks = join(dir, 'private.json');
    await writeFile(privateJwks, JSON.stringify({ keys: [await exportJWK(rsa.privateKey)] }));
    await assert.rejects(create(jwtSetting({ jwksFile: privateJwks })), /private or symmetric key/);
    const garbagePem = join(dir, 'garbage.pem');
    await writeFile(garbagePem, 'hello');
    await assert.rejects(
      create(jwtSetting({ jwksFile: undefined, publicKeyFile: garbagePem })),
      /auth\.jwt\.publicKeyFile .* is not a PEM public key/,
    );
    const ecPem = join(dir, 'ec.pem');
    await writeFile(ecPem, await exportSPKI(ec.publicKey));
    await assert.rejects(
      create(jwtSetting({ jwksFile: undefined, publicKeyFile: ecPem, algorithms: ['RS256'] })),
      /fits none of auth\.jwt\.algorithms/,
    );
  });

  test('unsafe or incomplete JWT settings fail creation', async () => {
    const create = (jwt: JwtSetting) => Authenticator.create(authSetting({ jwt }), silentLog);
    await assert.rejects(
      create(jwtSetting({ algorithms: ['RS256', 'none'] })),
      /auth\.jwt\.algorithms: "none" is not allowed/,
    );
    await assert.rejects(
      create(jwtSetting({ algorithms: ['HS256'] })),
      /auth\.jwt\.algorithms: "HS256" is not allowed/,
    );
    await assert.rejects(create(jwtSetting({ audience: [] })), /auth\.jwt\.audience is empty/);
    await assert.rejects(
      create(jwtSetting({ jwksUrl: 'https://issuer.example/jwks' })),
      /exactly one of jwksUrl, jwksFile or publicKeyFile/,
    );
    await assert.rejects(
      create(jwtSetting({ jwksFile: undefined, jwksUrl: 'http://issuer.example/jwks' })),
      /auth\.jwt\.jwksUrl .* must use https/,
    );
  });

  describe('a JWKS URL', () => {
    let server: Server;
    let fetches = 0;
    let failWith: number | undefined;
    let jwksUrl: string;

    before(async () => {
      const body = JSON.stringify(await jwksOf());
      server = createServer((_request, response) => {
        fetches += 1;
        response.writeHead(failWith ?? 200, { 'content-type': 'application/json' });
        response.end(failWith ? '{}' : body);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
    });

    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    test('keys are fetched once and cached', async () => {
      fetches = 0;
      const authenticator = await Authenticator.create(
        authSetting({ jwt: jwtSetting({ jwksFile: undefined, jwksUrl }) }),
        silentLog,
      );
      const first = await authenticator.authenticate(`Bearer ${await sign()}`);
      const second = await authenticator.authenticate(`Bearer ${await sign({ alg: 'ES256', claims: { sub: 'bob' } })}`);
      assert.equal(first.ok && first.principal.id, 'alice');
      assert.equal(second.ok && second.principal.id, 'bob');
      assert.equal(fetches, 1);
    });

    test('an unavailable JWKS refuses tokens, logs without the token, and says why', async () => {
      failWith = 500;
      const { log, lines } = recordingLog();
      const logged = () => lines.map((line) => JSON.stringify(line.obj) + line.msg);
      try {
        const authenticator = await Authenticator.create(
          authSetting({ jwt: jwtSetting({ jwksFile: undefined, jwksUrl }) }),
          log,
        );
        const token = await sign();
        const failure = refusal(await authenticator.authenticate(`Bearer ${token}`));
        assert.equal(failure.error, 'invalid_token');
        assert.match(failure.reason, /^signing keys unavailable: JWKS fetch failed/);
        assert.ok(logged().some((line) => line.includes('JWT signing keys unavailable')));
        assert.ok(logged().every((line) => !line.includes(token)));
      } finally {
        failWith = undefined;
      }
    });
  });
});

describe('the Authorization header', () => {
  test('no header: anonymous when allowed, else 401 without an error code', async () => {
    assert.deepEqual(await authenticate(authSetting({ anonymous: true }), undefined), {
      ok: true,
      principal: ANONYMOUS_PRINCIPAL,
    });
    assert.deepEqual(await authenticate(authSetting(), undefined), {
      ok: false,
      status: 401,
      error: undefined,
      reason: 'no credentials',
    });
  });

  test('presented but bad credentials fail even when anonymous calls are allowed', async () => {
    const anonymous = authSetting({ anonymous: true });
    assert.equal(refusal(await authenticate(anonymous, 'Bearer wrong')).error, 'invalid_token');
    assert.equal(refusal(await authenticate(anonymous, 'Basic abc')).error, 'invalid_request');
    assert.equal(await jwtRefusal(await sign({ expiresIn: -10 }), anonymous), 'token expired');
  });

  test('malformed headers are invalid_request', async () => {
    for (const header of [
      'Basic abc',
      'Bearer',
      'Bearer a b',
      'Bearer  ',
      '',
      `Bearer ${API_KEY}"`,
      `Token ${API_KEY}`,
    ]) {
      const failure = refusal(await authenticate(authSetting(), header));
      assert.equal(failure.status, 401, header);
      assert.equal(failure.error, 'invalid_request', header);
    }
    assert.equal(refusal(await authenticate(authSetting(), 'Basic abc')).reason, 'Authorization scheme is not Bearer');
    assert.match(refusal(await authenticate(authSetting(), 'Bearer a b')).reason, /malformed Bearer credentials/);
  });

  test('enabled is false only when anyone may call and nothing could be checked', async () => {
    const open = await Authenticator.create(authSetting({ anonymous: true, apiKeys: [], jwt: undefined }), silentLog);
    assert.equal(open.enabled, false);
    assert.equal(
      (await Authenticator.create(authSetting({ anonymous: true, jwt: undefined }), silentLog)).enabled,
      true,
    );
    assert.equal((await Authenticator.create(authSetting({ anonymous: true, apiKeys: [] }), silentLog)).enabled, true);
    await assert.rejects(
      Authenticator.create(authSetting({ apiKeys: [], jwt: undefined }), silentLog),
      /auth\.anonymous is false but neither/,
    );
  });
});

describe('WWW-Authenticate', () => {
  const metadata = 'https://gw.example.com/.well-known/oauth-protected-resource';

  test('a missing token gets resource_metadata and scope, no error', () => {
    assert.equal(
      bearerChallenge({ resourceMetadata: metadata, scope: ['mcp:tools', 'mcp:read'] }),
      `Bearer resource_metadata="${metadata}", scope="mcp:tools mcp:read"`,
    );
    assert.equal(bearerChallenge({}), 'Bearer');
  });

  test('a bad token gets error, error_description and the rest, with quotes and control characters made safe', () => {
    const value = bearerChallenge({
      error: 'invalid_token',
      errorDescription: 'bad "x"\\y\r\nz é',
      resourceMetadata: metadata,
      scope: ['s'],
    });
    assert.equal(
      value,
      `Bearer error="invalid_token", error_description="bad 'x'/yz ?", resource_metadata="${metadata}", scope="s"`,
    );
  });

  test('quotedString escapes quote and backslash as quoted-pairs and drops control characters', () => {
    assert.equal(quotedString('a"b\\c\u0000d\te'), '"a\\"b\\\\cde"');
  });

  test('the Authenticator builds challenges for each refusal', async () => {
    const setting = authSetting({ oauth: { resource: AUDIENCE, authorizationServers: [], scopes: ['mcp:tools'] } });
    const authenticator = await Authenticator.create(setting, silentLog);
    assert.deepEqual(authenticator.requiredScopes, ['mcp:tools']);
    const missing = refusal(await authenticator.authenticate(undefined));
    assert.equal(
      authenticator.challenge(missing, metadata),
      `Bearer resource_metadata="${metadata}", scope="mcp:tools"`,
    );
    const malformed = refusal(await authenticator.authenticate('Basic abc'));
    assert.equal(
      authenticator.challenge(malformed, undefined),
      'Bearer error="invalid_request", error_description="Authorization scheme is not Bearer", scope="mcp:tools"',
    );
    const lacking = refusal(await authenticator.authenticate(`Bearer ${await sign()}`));
    assert.equal(lacking.status, 403);
    assert.equal(
      authenticator.challenge(lacking, metadata),
      `Bearer error="insufficient_scope", error_description="token lacks scope mcp:tools", ` +
        `resource_metadata="${metadata}", scope="mcp:tools"`,
    );
  });
});

describe('protected resource metadata', () => {
  test('the document names the resource, the issuer as authorization server, and the scopes', () => {
    const document = protectedResourceMetadata(
      authSetting({ oauth: { resource: AUDIENCE, authorizationServers: [], scopes: ['mcp:tools'] } }),
      'http://fallback/',
    );
    assert.deepEqual(document, {
      resource: AUDIENCE,
      authorization_servers: [ISSUER],
      scopes_supported: ['mcp:tools'],
      bearer_methods_supported: ['header'],
      resource_name: 'mcp-gateway',
    });
  });

  test('configured authorization servers win; empty lists are left out; the fallback resource fills in', () => {
    const configured = protectedResourceMetadata(
      authSetting({ oauth: { resource: undefined, authorizationServers: ['https://as.example'], scopes: [] } }),
      'http://127.0.0.1:8080/',
    );
    assert.deepEqual(configured, {
      resource: 'http://127.0.0.1:8080/',
      authorization_servers: ['https://as.example'],
      bearer_methods_supported: ['header'],
      resource_name: 'mcp-gateway',
    });
    const keysOnly = protectedResourceMetadata(authSetting({ jwt: undefined }), 'http://fallback/');
    assert.equal('authorization_servers' in keysOnly, false);
    assert.equal('scopes_supported' in keysOnly, false);
  });

  test('the metadata URL puts the well-known segment between host and path', () => {
    assert.equal(
      resourceMetadataUrl('https://gw.example.com/'),
      'https://gw.example.com/.well-known/oauth-protected-resource',
    );
    assert.equal(
      resourceMetadataUrl('https://gw.example.com'),
      'https://gw.example.com/.well-known/oauth-protected-resource',
    );
    assert.equal(
      resourceMetadataUrl('https://gw.example.com/', '/mcp'),
      'https://gw.example.com/.well-known/oauth-protected-resource/mcp',
    );
    assert.equal(
      resourceMetadataUrl('https://gw.example.com/base/mcp'),
      'https://gw.example.com/.well-known/oauth-protected-resource/base/mcp',
    );
    assert.equal(
      resourceMetadataUrl('http://127.0.0.1:8080/', '/servers/git/mcp'),
      'http://127.0.0.1:8080/.well-known/oauth-protected-resource/servers/git/mcp',
    );
  });
});

test(
  "a JWT cannot pass for an API key's principal, or for anonymous: policies, limits and held calls know " +
    'principals by id',
  async () => {
    for (const sub of ['ci-bot', 'anonymous']) {
      const reason = await jwtRefusal(await sign({ claims: { sub } }));
      assert.match(reason, new RegExp(`principal "${sub}", which is reserved for`));
    }
    const fine = await authenticate(authSetting(), `Bearer ${await sign({ claims: { sub: 'alice' } })}`);
    assert.equal(fine.ok, true);
  },
);
