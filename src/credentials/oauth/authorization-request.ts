// What the gateway's two authorization-code flows share (the upstream connection, oauth-client.ts, and the
// person's sign-in, sign-in.ts): the PKCE S256 verifier and the request carrying its challenge, and RFC 9207's
// check of the answer's `iss`.
import { createHash, randomBytes } from 'node:crypto';

/** A fresh PKCE code verifier (43 characters of base64url, RFC 7636's minimum entropy and more). */
export function codeVerifier(): string {
  return randomBytes(32).toString('base64url');
}

/** The authorization request for the code flow with PKCE S256; each flow adds its own parameters. */
export function codeRequestUrl(
  authorizationEndpoint: string,
  {
    clientId,
    redirectUri,
    state,
    verifier,
  }: { clientId: string; redirectUri: string; state: string; verifier: string },
): URL {
  const url = new URL(authorizationEndpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
  url.searchParams.set('code_challenge_method', 'S256');
  return url;
}

/**
 * RFC 9207 as the MCP spec's table has it: a present `iss` must equal the recorded issuer (simple string
 * comparison, no normalization); an absent one is refused only when the server said it sends it. Checked
 * before anything in the answer, an error included, is acted on or shown.
 */
export function issuerMatches(
  expected: { issuer: string; issParameterSupported: boolean },
  iss: string | undefined,
): boolean {
  return iss !== undefined ? iss === expected.issuer : !expected.issParameterSupported;
}
