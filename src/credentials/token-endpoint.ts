// One POST to an OAuth token endpoint (RFC 6749 §3.2), with the client authenticated as configured, and
// its answer read into a token or an error worded for the caller. Shared by token exchange and the OAuth
// client. A token endpoint's answer is never logged or echoed: only its `error` code and description.
// Nothing is sent to an endpoint in clear text off this machine, wherever its URL came from (the config
// and discovery refuse one first; a record stored before they did still names it).
import { isSecureOrLoopback } from '../../protocol/loopback.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface TokenClient {
  clientId: string;
  clientSecret?: string | undefined;
  authMethod: ClientAuthMethod;
}

/** A client that authenticates with a signed assertion (private_key_jwt, RFC 7523 §2.2) instead of a secret. */
export interface AssertingClient {
  clientId: string;
  authMethod: 'private_key_jwt';
  clientAssertion: string;
}

export interface TokenAnswer {
  accessToken: string;
  tokenType: string;
  /** Epoch ms, when the server said (`expires_in`). */
  expiresAt?: number;
  refreshToken?: string;
  scope?: string;
  issuedTokenType?: string;
  /** OpenID Connect: the ID token of a sign-in (scope openid). */
  idToken?: string;
}

export class TokenEndpointError extends Error {
  constructor(
    message: string,
    /** The server's `error` code (invalid_grant, …), or undefined when it did not answer as OAuth does. */
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/**
 * The endpoint is plain http off this machine: nothing was sent (MCP wants every authorization server endpoint over
 * https).
 */
export class InsecureTokenEndpoint extends TokenEndpointError {
  constructor(endpoint: string) {
    super(
      `the token endpoint ${endpoint} is not https, so nothing was sent to it: MCP requires https for every ` +
        `authorization server endpoint (plain http only on loopback)`,
      undefined,
    );
  }
}

const TIMEOUT_MS = 10_000;

/** What a code was asked for with: where it is redeemed, as whom, and the redirect URI and PKCE verifier sent. */
export interface CodeRequest {
  tokenEndpoint: string;
  client: TokenClient;
  redirectUri: string;
  verifier: string;
}

/**
 * The authorization code grant's token request (RFC 6749 §4.1.3, the PKCE verifier, RFC 8707's resource when
 * there is one): for a person's upstream connection and for the gateway's own sign-in alike.
 */
export function redeemCode(asked: CodeRequest, code: string, resource?: string): Promise<TokenAnswer> {
  return requestToken(asked.tokenEndpoint, asked.client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: asked.redirectUri,
    code_verifier: asked.verifier,
    resource,
  });
}

/** POSTs `form` to `endpoint` as `client`; resolves with the token, rejects with a TokenEndpointError. */
export async function requestToken(
  endpoint: string,
  client: TokenClient | AssertingClient,
  form: Record<string, string | undefined>,
  fetchImpl: typeof fetch = fetch,
): Promise<TokenAnswer> {
  // A code, a refresh token, the caller's own JWT or the client secret: none travels in clear text.
  if (!isSecureOrLoopback(endpoint)) throw new InsecureTokenEndpoint(endpoint);
  const body = new URLSearchParams();
  // An empty value is no value (a record with no resource: an issuer that binds none).
  for (const [name, value] of Object.entries(form)) if (value !== undefined && value !== '') body.set(name, value);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (client.authMethod === 'client_secret_basic') {
    // RFC 6749 §2.3.1: each part form-encoded before Base64.
    headers.authorization = `Basic ${Buffer.from(
      `${formEncode(client.clientId)}:${formEncode(client.clientSecret ?? '')}`,
    ).toString('base64')}`;
  } else if (client.authMethod === 'private_key_jwt') {
    // RFC 7523 §3: the assertion's sub is the client; the ext-auth extension sends no client_id beside it.
    body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    body.set('client_assertion', client.clientAssertion);
  } else {
    body.set('client_id', client.clientId);
    if (client.authMethod === 'client_secret_post' && client.clientSecret !== undefined)
      body.set('client_secret', client.clientSecret);
  }
  let response: Response;
  try {
    response = await fetchImpl(endpoint, {
      method: 'POST',
      headers,
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new TokenEndpointError(
      `the token endpoint ${endpoint} could not be reached (${(error as Error).message})`,
      undefined,
    );
  }
  let json: Record<string, unknown> | undefined;
  try {
    json = (await response.json()) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  if (!response.ok || typeof json?.access_token !== 'string') {
    const code = typeof json?.error === 'string' ? json.error : undefined;
    const description = typeof json?.error_description === 'string' ? `: ${json.error_description.slice(0, 200)}` : '';
    throw new TokenEndpointError(
      `the token endpoint ${endpoint} refused (HTTP ${response.status}${code ? `, ${code}` : ''}${description})`,
      code,
    );
  }
  const answer: TokenAnswer = {
    accessToken: json.access_token,
    tokenType: typeof json.token_type === 'string' ? json.token_type : 'Bearer',
  };
  if (typeof json.expires_in === 'number' && json.expires_in > 0)
    answer.expiresAt = Date.now() + json.expires_in * 1000;
  if (typeof json.refresh_token === 'string') answer.refreshToken = json.refresh_token;
  if (typeof json.scope === 'string') answer.scope = json.scope;
  if (typeof json.issued_token_type === 'string') answer.issuedTokenType = json.issued_token_type;
  if (typeof json.id_token === 'string') answer.idToken = json.id_token;
  return answer;
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}
