// JWT access tokens: signature, issuer, audience and time checks by jose; the caller's identity from claims.
// Every refusal carries a reason precise enough for the audit log and for `error_description`, and never the
// token itself.

import { readFile } from 'node:fs/promises';
import type * as Jose from 'jose';
import type { CryptoKey, JSONWebKeySet, JWTPayload, JWTVerifyGetKey } from 'jose';
import type { Log } from '../infra/log.js';
import { isSecureOrLoopback } from '../protocol/loopback.js';
import type { Principal } from './principal.js';
import type { JwtSetting } from './settings.js';

// Loaded by the first JwtVerifier.create: a gateway without auth.jwt does not carry jose in memory.
let jose: typeof Jose;

export type JwtVerdict = { ok: true; principal: Principal } | { ok: false; reason: string };

// Only public-key algorithms: the gateway holds verification keys, never signing secrets, and an HMAC "public
// key" would let anyone who can read the key file mint tokens. `none` is refused by not being here.
const PUBLIC_KEY_ALGORITHMS: ReadonlySet<string> = new Set([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'ML-DSA-44',
  'ML-DSA-65',
  'ML-DSA-87',
]);

// Three base64url segments; the last may be empty so an unsecured token reaches the verifier and is refused
// with a reason that says so, rather than falling through as an "unknown API key".
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function looksLikeJwt(token: string): boolean {
  return JWT_SHAPE.test(token);
}

// A remote JWKS (auth.jwt.jwksUrl's, and the one the sign-in checks ID tokens with) is refetched at most every
// 30 s when a token names an unknown key (a rotation), and at least every 10 min; a fetch that hangs fails the
// request after 5 s instead of holding it.
export const REMOTE_JWKS = { timeoutDuration: 5_000, cooldownDuration: 30_000, cacheMaxAge: 600_000 };
const KEY_TROUBLE_LOG_INTERVAL_MS = 30_000;

/** Raised by our key resolver when the keys could not be had at all: the operator's problem, not the token's. */
class SigningKeysUnavailable extends Error {}

export class JwtVerifier {
  readonly #setting: JwtSetting;
  readonly #keys: JWTVerifyGetKey;
  readonly #log: Log;
  readonly #options: Parameters<typeof Jose.jwtVerify>[2];
  #lastKeyTroubleLoggedAt = -Infinity;

  private constructor(setting: JwtSetting, keys: JWTVerifyGetKey, log: Log) {
    this.#setting = setting;
    this.#keys = keys;
    this.#log = log;
    this.#options = {
      issuer: setting.issuer,
      audience: [...setting.audience],
      algorithms: [...setting.algorithms],
      clockTolerance: setting.clockToleranceSec,
      // A token without an expiry would be good forever once leaked.
      requiredClaims: ['exp'],
    };
  }

  /** Reads key files and checks the setting; throws an Error naming the config key and the fix. */
  static async create(setting: JwtSetting, log: Log): Promise<JwtVerifier> {
    checkSetting(setting);
    jose ??= await import('jose');
    const keys = await keySource(setting);
    return new JwtVerifier(setting, keys, log);
  }

  async verify(token: string): Promise<JwtVerdict> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jose.jwtVerify(token, this.#keys, this.#options));
    } catch (error) {
      return { ok: false, reason: this.#describeFailure(error, token) };
    }
    return principalFrom(payload, this.#setting);
  }

  #describeFailure(error: unknown, token: string): string {
    if (error instanceof SigningKeysUnavailable) {
      this.#logKeyTrouble(error.message);
      return `signing keys unavailable: ${error.message}`;
    }
    if (!(error instanceof jose.errors.JOSEError)) {
      this.#logKeyTrouble(error instanceof Error ? error.message : String(error));
      return 'token could not be verified';
    }
    switch (error.code) {
      case 'ERR_JWT_EXPIRED':
        return 'token expired';
      case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
        return describeClaimFailure(error as Jose.errors.JWTClaimValidationFailed, this.#setting);
      case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
        return 'signature did not verify';
      case 'ERR_JOSE_ALG_NOT_ALLOWED':
        return describeRefusedAlgorithm(token, this.#setting);
      case 'ERR_JWKS_NO_MATCHING_KEY':
        return 'no signing key matches the token (kid/alg)';
      case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
        return 'several signing keys match the token; it needs a kid';
      case 'ERR_JOSE_NOT_SUPPORTED':
        return `unsupported token: ${error.message}`;
      default:
        // JWSInvalid, JWTInvalid: jose's messages are fixed text, never token content.
        return `malformed token: ${error.message}`;
    }
  }

  #logKeyTrouble(message: string): void {
    // Every request fails the same way while the keys are missing; one line per interval says it.
    const now = Date.now();
    if (now - this.#lastKeyTroubleLoggedAt < KEY_TROUBLE_LOG_INTERVAL_MS) return;
    this.#lastKeyTroubleLoggedAt = now;
    this.#log.warn(
      { issuer: this.#setting.issuer, jwksUrl: this.#setting.jwksUrl, error: message },
      'JWT signing keys unavailable',
    );
  }
}

function describeClaimFailure(error: Jose.errors.JWTClaimValidationFailed, setting: JwtSetting): string {
  if (error.reason === 'missing') return `missing required "${error.claim}" claim`;
  switch (error.claim) {
    case 'nbf':
      return 'token not yet valid (nbf is in the future)';
    case 'aud':
      return `wrong audience: expected ${setting.audience.join(' or ')}`;
    case 'iss':
      return `wrong issuer: expected ${setting.issuer}`;
    default:
      return `invalid "${error.claim}" claim: ${error.message}`;
  }
}

function describeRefusedAlgorithm(token: string, setting: JwtSetting): string {
  let alg: unknown;
  try {
    alg = jose.decodeProtectedHeader(token).alg;
  } catch {
    return 'malformed token: unreadable header';
  }
  if (alg === 'none') return 'unsecured token (alg "none") refused';
  // The header is the caller's text: name the algorithm only when it looks like one.
  const named = typeof alg === 'string' && /^[A-Za-z0-9-]{1,16}$/.test(alg) ? ` "${alg}"` : '';
  return `algorithm${named} not allowed (allowed: ${setting.algorithms.join(', ')})`;
}

function principalFrom(payload: JWTPayload, setting: JwtSetting): JwtVerdict {
  const id = payload[setting.principalClaim];
  if (typeof id !== 'string' || id === '') {
    return { ok: false, reason: `principal claim "${setting.principalClaim}" is missing or not a non-empty string` };
  }
  // A malformed groups or scopes claim refuses the token rather than being dropped: policies may deny by group,
  // and silently losing a group could turn a deny into an allow.
  const groups = stringList(payload[setting.groupsClaim]);
  if (groups === undefined) {
    return {
      ok: false,
      reason: `groups claim "${setting.groupsClaim}" must be an array of strings or a space-separated string`,
    };
  }
  const scopes = stringList(payload.scope ?? payload.scp);
  if (scopes === undefined) {
    return { ok: false, reason: 'scope claim must be a space-separated string (scope) or an array of strings (scp)' };
  }
  return {
    ok: true,
    principal: Object.freeze({ id, groups: Object.freeze(groups), scopes: Object.freeze(scopes), via: 'jwt' }),
  };
}

/** A claim holding names: absent → [], a space-separated string, or an array of strings; anything else → undefined. */
function stringList(claim: unknown): string[] | undefined {
  if (claim === undefined || claim === null) return [];
  if (typeof claim === 'string') return claim.split(' ').filter((name) => name !== '');
  if (Array.isArray(claim) && claim.every((name) => typeof name === 'string'))
    return claim.filter((name) => name !== '');
  return undefined;
}

function checkSetting(setting: JwtSetting): void {
  if (setting.issuer === '')
    throw new Error("auth.jwt.issuer is empty: set it to the authorization server's issuer URL");
  if (setting.audience.length === 0) {
    // Accepting any audience would let a token minted for another service in the same realm in.
    throw new Error(
      "auth.jwt.audience is empty: set auth.jwt.audience, or auth.oauth.resource (the gateway's public URL)",
    );
  }
  if (setting.algorithms.length === 0)
    throw new Error('auth.jwt.algorithms is empty: list the algorithms your issuer signs with, e.g. [RS256]');
  for (const alg of setting.algorithms) {
    if (!PUBLIC_KEY_ALGORITHMS.has(alg)) {
      throw new Error(
        `auth.jwt.algorithms: "${alg}" is not allowed; use public-key algorithms only ` +
          `(${[...PUBLIC_KEY_ALGORITHMS].join(', ')})`,
      );
    }
  }
  if (!(setting.clockToleranceSec >= 0))
    throw new Error('auth.jwt.clockToleranceSec must be a number of seconds, 0 or more');
  const sources = [setting.jwksUrl, setting.jwksFile, setting.publicKeyFile].filter((source) => source !== undefined);
  if (sources.length !== 1) {
    throw new Error(
      'auth.jwt: set exactly one of jwksUrl, jwksFile or publicKeyFile (where the signing keys come from)',
    );
  }
}

async function keySource(setting: JwtSetting): Promise<JWTVerifyGetKey> {
  if (setting.jwksUrl !== undefined) return remoteKeys(setting.jwksUrl);
  if (setting.jwksFile !== undefined) return localKeys(setting.jwksFile);
  return publicKeyFileKeys(setting.publicKeyFile as string, setting.algorithms);
}

function remoteKeys(jwksUrl: string): JWTVerifyGetKey {
  let url: URL;
  try {
    url = new URL(jwksUrl);
  } catch {
    throw new Error(`auth.jwt.jwksUrl "${jwksUrl}" is not a URL: give the issuer's jwks_uri`);
  }
  // Keys fetched in clear text could be swapped by anyone on the path; plain http only to this machine.
  if (!isSecureOrLoopback(url)) {
    throw new Error(`auth.jwt.jwksUrl "${jwksUrl}" must use https (plain http is allowed only for loopback)`);
  }
  const remote = jose.createRemoteJWKSet(url, REMOTE_JWKS);
  return async (header, token) => {
    try {
      return await remote(header, token);
    } catch (error) {
      // No key for this kid/alg is about the token; everything else (network, HTTP status, bad JSON) is not.
      if (
        error instanceof jose.errors.JWKSNoMatchingKey ||
        error instanceof jose.errors.JWKSMultipleMatchingKeys ||
        error instanceof jose.errors.JOSENotSupported
      )
        throw error;
      if (error instanceof jose.errors.JWKSTimeout) throw new SigningKeysUnavailable('JWKS fetch timed out');
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      throw new SigningKeysUnavailable(
        `JWKS fetch failed (${error instanceof Error ? error.message : String(error)}${cause})`,
      );
    }
  };
}

async function localKeys(jwksFile: string): Promise<JWTVerifyGetKey> {
  const text = await readKeyFile('auth.jwt.jwksFile', jwksFile);
  let jwks: JSONWebKeySet;
  try {
    jwks = JSON.parse(text) as JSONWebKeySet;
  } catch (error) {
    throw new Error(
      `auth.jwt.jwksFile ${jwksFile} is not JSON (${(error as Error).message}): give a JWKS document {"keys": [...]}`,
    );
  }
  if (!Array.isArray(jwks?.keys))
    throw new Error(`auth.jwt.jwksFile ${jwksFile} has no "keys" array: give a JWKS document {"keys": [...]}`);
  for (const jwk of jwks.keys) {
    if (jwk.kty === 'oct' || 'd' in jwk) {
      throw new Error(`auth.jwt.jwksFile ${jwksFile} holds a private or symmetric key: publish only public keys in it`);
    }
  }
  try {
    return jose.createLocalJWKSet(jwks);
  } catch (error) {
    throw new Error(`auth.jwt.jwksFile ${jwksFile} is not a valid JWKS (${(error as Error).message})`);
  }
}

async function publicKeyFileKeys(publicKeyFile: string, algorithms: readonly string[]): Promise<JWTVerifyGetKey> {
  const pem = await readKeyFile('auth.jwt.publicKeyFile', publicKeyFile);
  if (pem.includes('PRIVATE KEY-----')) {
    throw new Error(
      `auth.jwt.publicKeyFile ${publicKeyFile} holds a private key: give the public key (PEM "PUBLIC KEY") or a ` +
        `certificate`,
    );
  }
  const certificate = pem.includes('-----BEGIN CERTIFICATE-----');
  if (!certificate && !pem.includes('-----BEGIN PUBLIC KEY-----')) {
    throw new Error(
      `auth.jwt.publicKeyFile ${publicKeyFile} is not a PEM public key or certificate (expected "-----BEGIN PUBLIC ` +
        `KEY-----" or "-----BEGIN CERTIFICATE-----")`,
    );
  }
  // One key object per algorithm, imported now: an RSA key serves RS* and PS*, an EC key only its curve's ES*.
  const keyByAlg = new Map<string, CryptoKey>();
  for (const alg of algorithms) {
    try {
      keyByAlg.set(alg, certificate ? await jose.importX509(pem, alg) : await jose.importSPKI(pem, alg));
    } catch {
      // This key does not fit this algorithm; tokens claiming it will find no key.
    }
  }
  if (keyByAlg.size === 0) {
    throw new Error(
      `auth.jwt.publicKeyFile ${publicKeyFile} fits none of auth.jwt.algorithms (${algorithms.join(', ')}): list ` +
        `the algorithm the key is for`,
    );
  }
  return (header) => {
    const key = header.alg === undefined ? undefined : keyByAlg.get(header.alg);
    if (key === undefined) throw new jose.errors.JWKSNoMatchingKey();
    return key;
  };
}

async function readKeyFile(settingName: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`${settingName} ${path} cannot be read (${code}): check the path and that the gateway may read it`);
  }
}
