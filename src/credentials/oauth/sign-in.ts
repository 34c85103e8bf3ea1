// The person who completes a connect link must be the principal it was made for (the spec's URL-mode
// elicitation security: otherwise a forwarded link connects someone else's upstream account to the caller).
// With auth.jwt whose issuer publishes an authorization endpoint, the link first signs the person in at that
// issuer — OpenID Connect authorization code with PKCE S256, `nonce`, RFC 9207 `iss` — and the ID token's
// principal claim (auth.jwt.principalClaim, as for callers' tokens) must equal the link's principal; only then
// does the upstream's authorization start (or, for a paste link, the paste form). The sign-in starts from the
// gateway's own confirmation page's POST, and its answer is finished only in the browser that sent that POST
// (the binding sealed here; docs/connect-flow.md). An issuer without an authorization endpoint: the
// confirmation page alone. Cold path: once per link.
import { randomBytes } from 'node:crypto';
import { codeRequestUrl, codeVerifier, issuerMatches } from './authorization-request.js';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { REMOTE_JWKS } from '../../../policy/jwt.js';
import { isSecureOrLoopback } from '../../../protocol/loopback.js';
import type { CredentialStore } from '../store.js';
import { redeemCode, type TokenClient } from '../token-endpoint.js';
import { ClientIdentities, type PreRegistered, redirectUris } from './client-identity.js';
import { type AuthorizationServer, authorizationServer, DiscoveryError } from './discovery.js';
import type { ConnectPending } from './oauth-client.js';
import type { SecretPending } from '../record.js';

/** A link the sign-in goes before: a connect link (OAuth) or a paste link (secrets). */
export type SignInLink = ConnectPending | SecretPending;

/** An issuer found without an authorization endpoint (or unreachable) is asked again after this long. */
const NO_SIGN_IN_RECHECK_MS = 5 * 60_000;

export interface SignInSettings {
  /** auth.jwt.issuer: the issuer of callers' tokens, where people sign in. */
  issuer: string;
  /** auth.jwt.principalClaim: the claim that names the principal. */
  principalClaim: string;
  /** credentials.signIn: the gateway's client at that issuer, if pre-registered, and the scopes to ask. */
  client: PreRegistered;
  scopes: string[];
  publicUrl: string;
  linkTtlMs: number;
}

/** What the sign-in request keeps until /connect/signed-in: the link it is for, and what checks the answer. */
export interface SignInPending {
  step: 'sign-in';
  link: SignInLink;
  /** The hash of the browser binding of whoever confirmed the link: /connect/signed-in requires it. */
  binding: string;
  verifier: string;
  nonce: string;
  issuer: string;
  issParameterSupported: boolean;
  tokenEndpoint: string;
  jwksUri: string;
  client: TokenClient;
  redirectUri: string;
}

/** The outcome of a sign-in: the link to go on with, or why not (worded for the person; `signedInAs` when known). */
export type SignedIn = { ok: true; link: SignInLink } | { ok: false; reason: string; signedInAs?: string };

/**
 * RFC 9207 on the sign-in answer, as on the upstream's (oauth-client.ts issuerProblem): checked before its error is
 * shown.
 */
export function signInIssuerProblem(pending: SignInPending, iss: string | undefined): string | undefined {
  if (issuerMatches(pending, iss)) return undefined;
  return (
    `the sign-in answer came from ${iss === undefined ? 'an unnamed issuer' : `"${iss}"`}, not ` +
    `${pending.issuer} (RFC 9207)`
  );
}

export class GatewaySignIn {
  private readonly identities: ClientIdentities;
  /**
   * The issuer's metadata, once found; null: it has no authorization endpoint (looked at again after
   * NO_SIGN_IN_RECHECK_MS).
   */
  private server: AuthorizationServer | null | undefined;
  private noSignInSince = 0;
  private readonly keys = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  constructor(
    private readonly settings: SignInSettings,
    private readonly store: CredentialStore,
  ) {
    this.identities = new ClientIdentities(settings.publicUrl);
  }

  /** auth.jwt.issuer: where people sign in (its host is named on the links' pages). */
  get issuer(): string {
    return this.settings.issuer;
  }

  /**
   * Where to send the browser to sign in before `link` goes on; undefined when the issuer publishes no
   * authorization endpoint (then the confirmation page). Rejects when it has one but it cannot be used.
   */
  async start(link: SignInLink, binding: string): Promise<string | undefined> {
    const server = await this.issuerServer();
    if (server === null) return undefined;
    if (!server.jwksUri)
      throw new DiscoveryError(
        `the issuer ${server.issuer} publishes no jwks_uri, so the gateway cannot check who signed in`,
      );
    const client = await this.identities.clientAt(server, this.settings.client, 'credentials.signIn');
    const verifier = codeVerifier();
    const nonce = randomBytes(16).toString('base64url');
    const redirectUri = redirectUris(this.settings.publicUrl).signIn;
    const pending: SignInPending = {
      step: 'sign-in',
      link,
      binding,
      verifier,
      nonce,
      issuer: server.issuer,
      issParameterSupported: server.issParameterSupported,
      tokenEndpoint: server.tokenEndpoint,
      jwksUri: server.jwksUri,
      client,
      redirectUri,
    };
    const state = await this.store.putPending(pending, this.settings.linkTtlMs);
    const url = codeRequestUrl(server.authorizationEndpoint, {
      clientId: client.clientId,
      redirectUri,
      state,
      verifier,
    });
    url.searchParams.set('scope', this.settings.scopes.join(' '));
    url.searchParams.set('nonce', nonce);
    // Whoever is signed in at the issuer already must still be the principal: say whom the link is for.
    url.searchParams.set('login_hint', link.principal);
    return url.href;
  }

  /** The issuer's redirect: the code exchanged, the ID token verified, its principal compared with the link's. */
  async finish(pending: SignInPending, code: string, iss: string | undefined): Promise<SignedIn> {
    const wrongIssuer = signInIssuerProblem(pending, iss);
    if (wrongIssuer !== undefined) return { ok: false, reason: wrongIssuer };
    const answer = await redeemCode(pending, code);
    if (answer.idToken === undefined)
      return {
        ok: false,
        reason: `the issuer ${pending.issuer} sent no ID token; credentials.signIn.scopes must include openid`,
      };
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(answer.idToken, this.keysAt(pending.jwksUri), {
        issuer: pending.issuer,
        audience: pending.client.clientId,
      }));
    } catch (error) {
      return {
        ok: false,
        reason: `the ID token from ${pending.issuer} was not accepted (${(error as Error).message})`,
      };
    }
    if (claims.nonce !== pending.nonce)
      return { ok: false, reason: 'the ID token is not the answer to this sign-in (nonce)' };
    const principal = claims[this.settings.principalClaim];
    if (typeof principal !== 'string' || principal === '') {
      return {
        ok: false,
        reason:
          `the ID token has no "${this.settings.principalClaim}" claim (auth.jwt.principalClaim); add the ` +
          `scope that brings it to credentials.signIn.scopes`,
      };
    }
    if (principal !== pending.link.principal) return { ok: false, reason: 'another person', signedInAs: principal };
    return { ok: true, link: pending.link };
  }

  private async issuerServer(): Promise<AuthorizationServer | null> {
    if (this.server || (this.server === null && Date.now() - this.noSignInSince < NO_SIGN_IN_RECHECK_MS))
      return this.server;
    // An issuer that is no https (or loopback) URL has no metadata to sign in with: the confirmation page.
    // One over plain http elsewhere never gets here (a load error, src/config/credentials.ts).
    if (!isSecureOrLoopback(this.settings.issuer)) {
      this.server = null;
      return null;
    }
    try {
      this.server = await authorizationServer(this.settings.issuer);
    } catch (error) {
      // No metadata, or none with an authorization endpoint: people cannot sign in there. Anything else (no S256) is
      // said.
      if (
        !(
          error instanceof DiscoveryError &&
          /no authorization server metadata|no authorization_endpoint/.test(error.message)
        )
      )
        throw error;
      this.server = null;
      this.noSignInSince = Date.now();
    }
    return this.server;
  }

  private keysAt(jwksUri: string): ReturnType<typeof createRemoteJWKSet> {
    let keys = this.keys.get(jwksUri);
    if (!keys) {
      keys = createRemoteJWKSet(new URL(jwksUri), REMOTE_JWKS);
      this.keys.set(jwksUri, keys);
    }
    return keys;
  }
}
