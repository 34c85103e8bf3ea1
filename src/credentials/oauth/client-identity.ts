// Who the gateway is at an authorization server, in the order the MCP spec gives
// (basic/authorization/client-registration): pre-registered (a clientId in config), else its Client ID
// Metadata Document (served under listen.publicUrl, whose URL is the client_id) when the server supports
// them and publicUrl is https (the draft requires it), else dynamic registration (RFC 7591), kept per issuer
// (the spec binds a registration to the server that made it). Used for upstreams (oauth-client.ts) and for
// signing a person in at the gateway's own issuer (sign-in.ts).
import type { ClientAuthMethod, TokenClient } from '../token-endpoint.js';
import { TokenEndpointError } from '../token-endpoint.js';
import type { AuthorizationServer } from './discovery.js';

export interface PreRegistered {
  clientId?: string | undefined;
  /** The authorization server it was registered at; absent: the first one it is used at (in this process). */
  issuer?: string | undefined;
  clientSecret?: string | undefined;
  authMethod?: ClientAuthMethod | undefined;
}

/** The redirect URIs of the gateway: the upstream authorization callback and the gateway sign-in callback. */
export function redirectUris(publicUrl: string): { connect: string; signIn: string } {
  return { connect: `${publicUrl}/connect/callback`, signIn: `${publicUrl}/connect/signed-in` };
}

/** Where the gateway serves its Client ID Metadata Document (a path, as the draft requires). */
export function clientMetadataUrl(publicUrl: string): string {
  return `${publicUrl}/oauth/client-metadata.json`;
}

/** The gateway's client metadata: its Client ID Metadata Document, and what it asks dynamic registration for. */
export function clientMetadata(publicUrl: string): Record<string, unknown> {
  const uris = redirectUris(publicUrl);
  return {
    client_id: clientMetadataUrl(publicUrl),
    client_name: 'mcp-gateway',
    client_uri: publicUrl,
    redirect_uris: [uris.connect, uris.signIn],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

export class ClientIdentities {
  /** Clients registered dynamically, by issuer, for this process. */
  private readonly registered = new Map<string, Promise<TokenClient>>();
  /** The issuer a pre-registered client without a configured one was first used at. */
  private firstIssuer: string | undefined;

  constructor(private readonly publicUrl: string) {}

  /** The client to be at `server`; `setting` names the config keys a pre-registration goes in (for errors). */
  clientAt(server: AuthorizationServer, preRegistered: PreRegistered, setting: string): Promise<TokenClient> {
    if (preRegistered.clientId !== undefined) {
      // The spec's authorization server binding: pre-registered credentials go only to the server that issued
      // them. A resource that starts naming another (moved, or its metadata tampered with) gets no client secret.
      const bound = preRegistered.issuer ?? this.firstIssuer;
      // A configured issuer may carry a trailing slash its metadata does not (or the other way round).
      if (bound !== undefined && bound.replace(/\/$/, '') !== server.issuer.replace(/\/$/, '')) {
        return Promise.reject(
          new TokenEndpointError(
            `the server now names authorization server ${server.issuer}, but ${setting}.clientId is registered at ` +
              `${bound}: the gateway sends its client credentials to no other. If the move is genuine, register ` +
              `there and set ${setting}.issuer (and clientId) to match`,
            undefined,
          ),
        );
      }
      this.firstIssuer ??= server.issuer;
      return Promise.resolve({
        clientId: preRegistered.clientId,
        clientSecret: preRegistered.clientSecret,
        authMethod:
          preRegistered.authMethod ?? pickMethod(server.tokenAuthMethods, preRegistered.clientSecret !== undefined),
      });
    }
    if (server.clientIdMetadataDocumentSupported && this.publicUrl.startsWith('https://')) {
      return Promise.resolve({ clientId: clientMetadataUrl(this.publicUrl), authMethod: 'none' });
    }
    if (!server.registrationEndpoint) {
      const cimd = server.clientIdMetadataDocumentSupported
        ? ' (it accepts a Client ID Metadata Document, which must be served over https: set listen.publicUrl to an ' +
          'https:// URL)'
        : '';
      return Promise.reject(
        new TokenEndpointError(
          `the authorization server ${server.issuer} offers no dynamic registration${cimd}; pre-register the ` +
            `gateway there and set ${setting}.clientId`,
          undefined,
        ),
      );
    }
    let registration = this.registered.get(server.issuer);
    if (!registration) {
      registration = register(server.registrationEndpoint, this.publicUrl, setting);
      this.registered.set(server.issuer, registration);
      // A failed registration is tried again next time.
      registration.catch(() => this.registered.delete(server.issuer));
    }
    return registration;
  }
}

/** With a secret, basic if offered, else post; without one, none. */
function pickMethod(offered: string[], hasSecret: boolean): ClientAuthMethod {
  if (!hasSecret) return 'none';
  return offered.includes('client_secret_basic') || !offered.includes('client_secret_post')
    ? 'client_secret_basic'
    : 'client_secret_post';
}

/** RFC 7591 registration as a public client; `application_type` as the spec asks (native for a loopback gateway). */
async function register(endpoint: string, publicUrl: string, setting: string): Promise<TokenClient> {
  const { client_id: _id, ...metadata } = clientMetadata(publicUrl);
  const loopback = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|$)/.test(publicUrl);
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ ...metadata, application_type: loopback ? 'native' : 'web' }),
      redirect: 'error',
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new TokenEndpointError(
      `dynamic registration at ${endpoint} could not be reached (${(error as Error).message})`,
      undefined,
    );
  }
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof json.client_id !== 'string') {
    const said =
      typeof json.error === 'string'
        ? `: ${json.error}` +
          (typeof json.error_description === 'string' ? ` (${json.error_description.slice(0, 200)})` : '')
        : '';
    const uris = redirectUris(publicUrl);
    throw new TokenEndpointError(
      `dynamic registration at ${endpoint} failed (HTTP ${response.status}${said}); pre-register the gateway with ` +
        `redirect URIs ${uris.connect} and ${uris.signIn} and set ${setting}.clientId`,
      undefined,
    );
  }
  // Asked for a public client; a server that issued a secret anyway says how to use it.
  const secret = typeof json.client_secret === 'string' ? json.client_secret : undefined;
  const method = json.token_endpoint_auth_method;
  const authMethod: ClientAuthMethod =
    method === 'client_secret_post' || method === 'client_secret_basic' || method === 'none'
      ? method
      : secret
        ? 'client_secret_basic'
        : 'none';
  return { clientId: json.client_id, clientSecret: secret, authMethod };
}
