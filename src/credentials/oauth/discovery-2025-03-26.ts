// The 2025-03-26 revision's authorization discovery (basic/authorization, "Server Metadata Discovery" and
// "Fallbacks for Servers without Metadata Discovery"), for an upstream that publishes no protected resource
// metadata: discovery.ts asks here only then, so the 2025-06-18+ path stays first and unchanged. That revision
// puts the authorization server at the MCP server's own origin (its "authorization base URL": the URL without
// its path): its RFC 8414 metadata at <origin>/.well-known/oauth-authorization-server, else the default
// endpoints <origin>/authorize, /token and /register. What comes back is metadata as RFC 8414 spells it, for
// discovery.ts to validate as it does any other (every endpoint https, or http on loopback; PKCE S256).
import { isSecureOrLoopback } from '../../../protocol/loopback.js';
import { DiscoveryError, readMetadata } from './metadata-document.js';

const REVISION = '2025-03-26';

/** An authorization server as the 2025-03-26 revision finds it: who it is, and its metadata, read or defaulted. */
export interface OriginAuthorization {
  issuer: string;
  metadata: Record<string, unknown>;
}

/**
 * The authorization server of `url` (an MCP endpoint with no protected resource metadata): always its own origin,
 * never another host, and refused before anything is sent when that origin is plain http off loopback.
 */
export async function authorizationAtOrigin(url: string): Promise<OriginAuthorization> {
  const origin = new URL(url).origin;
  if (!isSecureOrLoopback(origin)) {
    throw new DiscoveryError(
      `${url} publishes no protected resource metadata, and its origin ${origin} (where a ${REVISION} server's ` +
        `authorization server is) is not served over https; MCP requires https for every authorization server ` +
        `endpoint (plain http only on loopback)`,
    );
  }
  const where = `${origin}/.well-known/oauth-authorization-server`;
  // The revision asks clients to say which protocol revision they discover for.
  const read = await readMetadata(where, { 'mcp-protocol-version': REVISION });
  if (read.kind === 'unreachable') {
    throw new DiscoveryError(
      `${url} publishes no protected resource metadata, and the authorization server metadata at its origin ` +
        `(${where}) could not be read: ${read.why}`,
    );
  }
  if (read.kind === 'absent') return { issuer: origin, metadata: defaultEndpoints(origin) };
  return { issuer: issuerAtOrigin(read.json.issuer, origin, where), metadata: read.json };
}

/**
 * The metadata's own issuer, which must be on the upstream's origin (a path there is fine: a server may keep its
 * authorization under /oauth); absent, the origin itself, the identifier its metadata URL was made from.
 */
function issuerAtOrigin(issuer: unknown, origin: string, where: string): string {
  if (issuer === undefined) return origin;
  if (typeof issuer === 'string' && URL.canParse(issuer) && new URL(issuer).origin === origin) return issuer;
  throw new DiscoveryError(
    `the authorization server metadata at ${where} names issuer ${String(issuer)}, which is not on ${origin}: a ` +
      `server without protected resource metadata may only be its own authorization server`,
  );
}

/**
 * The revision's fallback: "clients MUST use the following default endpoint paths relative to the authorization
 * base URL". S256 is stated, not read: that revision requires PKCE of every client and server.
 */
function defaultEndpoints(origin: string): Record<string, unknown> {
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    code_challenge_methods_supported: ['S256'],
  };
}
