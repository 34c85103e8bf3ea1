// Who is calling: the Authorization header → a Principal, or a refusal the edge turns into 401/403 with a
// WWW-Authenticate challenge. API keys answer synchronously; only JWTs cost a Promise.

import type { Log } from '../infra/log.js';
import { ApiKeys } from './api-keys.js';
import { JwtVerifier, looksLikeJwt } from './jwt.js';
import { ANONYMOUS_PRINCIPAL, type Principal } from './principal.js';
import type { AuthSetting } from './settings.js';
import { bearerChallenge } from './www-authenticate.js';

export type AuthResult =
  | { ok: true; principal: Principal }
  | {
      ok: false;
      status: 401 | 403;
      error: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | undefined;
      reason: string;
    };

export type AuthFailure = Extract<AuthResult, { ok: false }>;

// RFC 9110 §11.4: `Bearer` (any case), then one token68. Header values arrive trimmed.
const BEARER_CREDENTIALS = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
const BEARER_SCHEME = /^bearer(?: |$)/i;

// The refusals that carry nothing request-specific are built once.
const NO_CREDENTIALS: AuthFailure = Object.freeze({
  ok: false,
  status: 401,
  error: undefined,
  reason: 'no credentials',
});
const NOT_BEARER: AuthFailure = Object.freeze({
  ok: false,
  status: 401,
  error: 'invalid_request',
  reason: 'Authorization scheme is not Bearer',
});
const MALFORMED_BEARER: AuthFailure = Object.freeze({
  ok: false,
  status: 401,
  error: 'invalid_request',
  reason: 'malformed Bearer credentials: expected "Bearer <token>"',
});
const UNKNOWN_API_KEY: AuthFailure = Object.freeze({
  ok: false,
  status: 401,
  error: 'invalid_token',
  reason: 'unknown API key',
});
const ANONYMOUS: AuthResult = Object.freeze({ ok: true, principal: ANONYMOUS_PRINCIPAL });

export class Authenticator {
  /** False when anyone may call and nothing could be checked: the edge can skip authentication. */
  readonly enabled: boolean;
  readonly #anonymous: boolean;
  readonly #apiKeys: ApiKeys;
  readonly #jwt: JwtVerifier | undefined;
  readonly #requiredScopes: readonly string[];

  private constructor(setting: AuthSetting, apiKeys: ApiKeys, jwt: JwtVerifier | undefined) {
    this.#anonymous = setting.anonymous;
    this.#apiKeys = apiKeys;
    this.#jwt = jwt;
    this.#requiredScopes = Object.freeze([...setting.oauth.scopes]);
    this.enabled = !(setting.anonymous && apiKeys.size === 0 && jwt === undefined);
  }

  /** Reads key files and checks the setting; throws an Error that names the config key and the fix. */
  static async create(setting: AuthSetting, log: Log): Promise<Authenticator> {
    const apiKeys = new ApiKeys(setting.apiKeys);
    const jwt = setting.jwt ? await JwtVerifier.create(setting.jwt, log.child({ component: 'jwt' })) : undefined;
    if (!setting.anonymous && apiKeys.size === 0 && jwt === undefined) {
      throw new Error(
        'auth.anonymous is false but neither auth.apiKeys nor auth.jwt is set, so nobody could call: configure one, ' +
          'or set auth.anonymous: true',
      );
    }
    log.debug(
      {
        anonymous: setting.anonymous,
        apiKeys: apiKeys.size,
        jwtIssuer: setting.jwt?.issuer,
        requiredScopes: setting.oauth.scopes,
      },
      'authentication configured',
    );
    return new Authenticator(setting, apiKeys, jwt);
  }

  /** Scopes every JWT must carry; the challenge advertises them. */
  get requiredScopes(): readonly string[] {
    return this.#requiredScopes;
  }

  authenticate(authorization: string | undefined): AuthResult | Promise<AuthResult> {
    if (authorization === undefined) return this.#anonymous ? ANONYMOUS : NO_CREDENTIALS;
    // Credentials that were presented must be good even where anonymous calls are allowed: a client with a
    // wrong key should hear so, not silently get anonymous rights.
    const token = BEARER_CREDENTIALS.exec(authorization)?.[1];
    if (token === undefined) return BEARER_SCHEME.test(authorization) ? MALFORMED_BEARER : NOT_BEARER;
    const principal = this.#apiKeys.lookup(token);
    if (principal) return { ok: true, principal };
    if (this.#jwt && looksLikeJwt(token)) return this.#verifyJwt(this.#jwt, token);
    return UNKNOWN_API_KEY;
  }

  /** The `WWW-Authenticate` value for a refusal. */
  challenge(failure: AuthFailure, resourceMetadataUrl: string | undefined): string {
    return bearerChallenge({
      error: failure.error,
      errorDescription: failure.reason,
      resourceMetadata: resourceMetadataUrl,
      scope: this.#requiredScopes,
    });
  }

  async #verifyJwt(jwt: JwtVerifier, token: string): Promise<AuthResult> {
    const verdict = await jwt.verify(token);
    if (!verdict.ok) return { ok: false, status: 401, error: 'invalid_token', reason: verdict.reason };
    // Policies, rate limits and held calls know principals by id: a token must not pass for an API key's
    // principal, or for the anonymous one.
    const id = verdict.principal.id;
    if (id === ANONYMOUS_PRINCIPAL.id || this.#apiKeys.names(id)) {
      return {
        ok: false,
        status: 401,
        error: 'invalid_token',
        reason:
          `the token names principal "${id}", which is reserved for ` +
          `${id === ANONYMOUS_PRINCIPAL.id ? 'callers without credentials' : 'an API key'}; choose another ` +
          `auth.jwt.principalClaim or principal name`,
      };
    }
    const missing = this.#requiredScopes.filter((scope) => !verdict.principal.scopes.includes(scope));
    if (missing.length > 0) {
      return { ok: false, status: 403, error: 'insufficient_scope', reason: `token lacks scope ${missing.join(' ')}` };
    }
    return { ok: true, principal: verdict.principal };
  }
}
