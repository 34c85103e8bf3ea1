// What an authorization server offers when the config names it (a perCaller stdio server's
// credentials.issuer): a child sends no 401 and publishes no protected resource metadata, so the first half
// of discovery.ts is skipped and its second half (RFC 8414, then OpenID discovery) runs on the issuer given,
// with the same checks. The resource is the configured one, or none (the authorization server does not
// bind tokens to a resource, as GitHub's does not); scopes come from the config.
import { type Discovered, DiscoveryError, authorizationServer } from './discovery.js';

export async function discoverIssuer(issuer: string, resource: string | undefined): Promise<Discovered> {
  try {
    return { ...(await authorizationServer(issuer)), resource: resource ?? '', scopes: [] };
  } catch (error) {
    if (error instanceof DiscoveryError && /names issuer/.test(error.message))
      throw new DiscoveryError(`${error.message}: correct credentials.issuer`);
    throw error;
  }
}
