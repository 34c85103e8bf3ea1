// What an authorization server offers when the config names it (a perCaller stdio server's
// credentials.issuer): a child sends no 401 and publishes no protected resource metadata, so the first half
// of discovery.ts is skipped and its second half (RFC 8414, then OpenID discovery) runs on the issuer given,
// with the same checks. The resource is the configured one, or none (the authorization server does not
// bind tokens to a resource, as GitHub's does not); scopes come from the config.
import { type Discovered, DiscoveryError, authorizationServerMetadata } from './discovery.js';

export async function discoverIssuer(issuer: string, resource: string | undefined): Promise<Discovered> {
  const as = await authorizationServerMetadata(issuer);
  if (as.issuer !== issuer && as.issuer !== issuer.replace(/\/$/, '')) {
    throw new DiscoveryError(`the authorization server metadata of ${issuer} names issuer ${String(as.issuer)}; they must be equal (RFC 8414 §3.3): correct credentials.issuer`);
  }
  if (typeof as.authorization_endpoint !== 'string' || typeof as.token_endpoint !== 'string') {
    throw new DiscoveryError(`the authorization server ${issuer} publishes no authorization_endpoint or token_endpoint`);
  }
  const methods = strings(as.code_challenge_methods_supported);
  if (!methods.includes('S256')) throw new DiscoveryError(`the authorization server ${issuer} does not advertise PKCE S256 (code_challenge_methods_supported)`);
  return {
    resource: resource ?? '',
    issuer: String(as.issuer),
    authorizationEndpoint: as.authorization_endpoint,
    tokenEndpoint: as.token_endpoint,
    registrationEndpoint: typeof as.registration_endpoint === 'string' ? as.registration_endpoint : undefined,
    tokenAuthMethods: as.token_endpoint_auth_methods_supported === undefined ? ['client_secret_basic'] : strings(as.token_endpoint_auth_methods_supported),
    issParameterSupported: as.authorization_response_iss_parameter_supported === true,
    codeChallengeMethods: methods,
    scopes: [],
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
