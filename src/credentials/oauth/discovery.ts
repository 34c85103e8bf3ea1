// Where an upstream's authorization server is and what it offers, found as the MCP authorization spec
// tells a client to (basic/authorization, 2026-07-28): the protected resource metadata (RFC 9728) named by
// the upstream's 401 `WWW-Authenticate: resource_metadata`, else at its well-known URLs; then the
// authorization server's metadata (RFC 8414), else OpenID discovery. An upstream that publishes no protected
// resource metadata at all is a 2025-03-26 server: its authorization server is its own origin
// (discovery-2025-03-26.ts). Cold path: once per connect link.
import { isSecureOrLoopback } from '../../../protocol/loopback.js';
import { authorizationAtOrigin } from './discovery-2025-03-26.js';
import { DiscoveryError, getJson, readMetadata } from './metadata-document.js';

export { DiscoveryError } from './metadata-document.js';

/** What the gateway needs of an authorization server, from its validated metadata (RFC 8414 / OpenID discovery). */
export interface AuthorizationServer {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  registrationEndpoint?: string | undefined;
  /** The authorization server accepts a Client ID Metadata Document URL as client_id. */
  clientIdMetadataDocumentSupported: boolean;
  tokenAuthMethods: string[];
  /** RFC 9207: the authorization server sends `iss` on its redirect; then it must be there and match. */
  issParameterSupported: boolean;
  codeChallengeMethods: string[];
  /** The authorization server lists offline_access in scopes_supported: asking for it may bring refresh tokens. */
  offlineAccess: boolean;
  /** Where its signing keys are (for ID tokens), when it says. */
  jwksUri?: string | undefined;
}

export interface Discovered extends AuthorizationServer {
  /** The resource the tokens are for (RFC 9728 `resource`): the upstream, and only it, gets them. */
  resource: string;
  /** Scopes in the order the spec ranks them: the 401's `scope`, else the resource's scopes_supported. */
  scopes: string[];
}

const TIMEOUT_MS = 10_000;

/**
 * Discovers the authorization of `url` (the upstream's MCP endpoint); `preferred`: the issuer to pick when it is
 * listed.
 */
export async function discover(url: string, preferred?: string): Promise<Discovered> {
  const challenge = await unauthenticatedChallenge(url);
  const asked = challenge.scope ? challenge.scope.split(' ').filter(Boolean) : undefined;
  const found = await resourceMetadata(url, challenge.resourceMetadata);
  if (found === undefined) {
    // None at all, and none promised by the 401: the 2025-03-26 revision's way, checked as any other server is.
    const atOrigin = await authorizationAtOrigin(url);
    return { ...described(atOrigin.issuer, atOrigin.metadata), resource: url, scopes: asked ?? [] };
  }
  const { metadata, atRoot } = found;
  const resource = typeof metadata.resource === 'string' ? metadata.resource : url;
  // RFC 9728 §3.3: the resource is the identifier the metadata URL was made from. At the root well-known URL that
  // is the origin (a server with one resource for the whole host says so there); the URL itself is also taken.
  if (!sameResource(resource, url) && !(atRoot && sameResource(resource, new URL(url).origin))) {
    throw new DiscoveryError(
      `the server's protected resource metadata names ${resource}, not ${url}${atRoot ? ' or its origin' : ''}: ` +
        `refusing to send it tokens for another resource`,
    );
  }
  const servers = Array.isArray(metadata.authorization_servers)
    ? metadata.authorization_servers.filter((s): s is string => typeof s === 'string')
    : [];
  if (servers.length === 0)
    throw new DiscoveryError(`the protected resource metadata of ${url} names no authorization_servers`);
  const server = await authorizationServer(
    preferred !== undefined && servers.includes(preferred) ? preferred : servers[0]!,
  );
  return { ...server, resource, scopes: asked ?? stringList(metadata.scopes_supported) };
}

/** The endpoints of an authorization server the gateway sends codes, secrets and tokens to, or reads keys from. */
const ENDPOINTS = ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'jwks_uri'] as const;
const HTTPS_ONLY = 'MCP requires https for every authorization server endpoint (plain http only on loopback)';

/**
 * The validated metadata of the authorization server `issuer`: its own issuer, then `described`'s checks. An
 * issuer named by an upstream's metadata is refused before anything is fetched from it.
 */
export async function authorizationServer(issuer: string): Promise<AuthorizationServer> {
  if (!isSecureOrLoopback(issuer))
    throw new DiscoveryError(`the authorization server ${issuer} is not served over https; ${HTTPS_ONLY}`);
  const as = await authorizationServerMetadata(issuer);
  if (as.issuer !== issuer)
    throw new DiscoveryError(
      `the authorization server metadata of ${issuer} names issuer ${String(as.issuer)}; they must be equal (RFC ` +
        `8414 §3.3)`,
    );
  return described(issuer, as);
}

/**
 * What every authorization server's metadata must hold, however it was found: both endpoints, PKCE S256, and
 * every endpoint over https (the spec: "All authorization server endpoints MUST be served over HTTPS"; plain
 * http only on this machine).
 */
function described(issuer: string, as: Record<string, unknown>): AuthorizationServer {
  if (typeof as.authorization_endpoint !== 'string' || typeof as.token_endpoint !== 'string') {
    throw new DiscoveryError(
      `the authorization server ${issuer} publishes no authorization_endpoint or token_endpoint`,
    );
  }
  for (const field of ENDPOINTS) {
    const value = as[field];
    if (typeof value === 'string' && !isSecureOrLoopback(value)) {
      throw new DiscoveryError(
        `the authorization server ${issuer} publishes ${field} ${value}, which is not https; ${HTTPS_ONLY}`,
      );
    }
  }
  const methods = stringList(as.code_challenge_methods_supported);
  // The spec: a client MUST refuse to proceed when the server does not advertise S256 support.
  if (!methods.includes('S256'))
    throw new DiscoveryError(
      `the authorization server ${issuer} does not advertise PKCE S256 (code_challenge_methods_supported)`,
    );
  return {
    issuer,
    authorizationEndpoint: as.authorization_endpoint,
    tokenEndpoint: as.token_endpoint,
    registrationEndpoint: typeof as.registration_endpoint === 'string' ? as.registration_endpoint : undefined,
    clientIdMetadataDocumentSupported: as.client_id_metadata_document_supported === true,
    tokenAuthMethods:
      as.token_endpoint_auth_methods_supported === undefined
        ? ['client_secret_basic']
        : stringList(as.token_endpoint_auth_methods_supported),
    issParameterSupported: as.authorization_response_iss_parameter_supported === true,
    codeChallengeMethods: methods,
    offlineAccess: stringList(as.scopes_supported).includes('offline_access'),
    jwksUri: typeof as.jwks_uri === 'string' ? as.jwks_uri : undefined,
  };
}

/** The 401 an unauthenticated request gets: its resource_metadata and scope parameters, if any. */
async function unauthenticatedChallenge(url: string): Promise<{ resourceMetadata?: string; scope?: string }> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'server/discover',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    const header = response.headers.get('www-authenticate');
    return header ? bearerParameters(header) : {};
  } catch {
    return {};
  }
}

/** The auth-params of a Bearer challenge (RFC 6750 §3), by name. */
export function bearerParameters(header: string): { resourceMetadata?: string; scope?: string; error?: string } {
  const found: Record<string, string> = {};
  const pattern = /([A-Za-z_]+)="((?:[^"\\]|\\.)*)"|([A-Za-z_]+)=([^\s,"]+)/g;
  for (const match of header.matchAll(pattern)) {
    const name = (match[1] ?? match[3])!.toLowerCase();
    found[name] = (match[2] ?? match[4])!.replace(/\\(.)/g, '$1');
  }
  return { resourceMetadata: found.resource_metadata, scope: found.scope, error: found.error };
}

/**
 * The upstream's protected resource metadata, and whether it came from the root well-known URL; undefined when
 * it publishes none: the 401 named none, and every well-known URL answered without it. Metadata the 401 promised
 * and a URL that could not be read are errors, never a reason to look elsewhere.
 */
async function resourceMetadata(
  url: string,
  named: string | undefined,
): Promise<{ metadata: Record<string, unknown>; atRoot: boolean } | undefined> {
  const target = new URL(url);
  const path = target.pathname === '/' ? '' : target.pathname.replace(/\/$/, '');
  const root = `${target.origin}/.well-known/oauth-protected-resource`;
  const candidates = named ? [named] : [`${root}${path}`, root];
  const tried: string[] = [];
  let unreachable = false;
  for (const candidate of candidates) {
    const read = await readMetadata(candidate);
    if (read.kind === 'found') return { metadata: read.json, atRoot: !named && path !== '' && candidate === root };
    tried.push(`${candidate} (${read.why})`);
    unreachable ||= read.kind === 'unreachable';
  }
  if (!named && !unreachable) return undefined;
  throw new DiscoveryError(`no protected resource metadata (RFC 9728) for ${url}: tried ${tried.join(', ')}`);
}

export async function authorizationServerMetadata(issuer: string): Promise<Record<string, unknown>> {
  const target = new URL(issuer);
  const path = target.pathname === '/' ? '' : target.pathname.replace(/\/$/, '');
  const candidates = path
    ? [
        `${target.origin}/.well-known/oauth-authorization-server${path}`,
        `${target.origin}/.well-known/openid-configuration${path}`,
        `${target.origin}${path}/.well-known/openid-configuration`,
      ]
    : [`${target.origin}/.well-known/oauth-authorization-server`, `${target.origin}/.well-known/openid-configuration`];
  for (const candidate of candidates) {
    const found = await getJson(candidate);
    if (found) return found;
  }
  throw new DiscoveryError(`no authorization server metadata for ${issuer}: tried ${candidates.join(', ')}`);
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * Whether a token issued for `resource` may be sent to `url`: the resource is the url, or its origin (what
 * discovery accepts from metadata at the root well-known URL, for a server with one resource for its whole host).
 */
export function resourceServes(resource: string, url: string): boolean {
  try {
    return sameResource(resource, url) || sameResource(resource, new URL(url).origin);
  } catch {
    return false;
  }
}

/** RFC 8707 / RFC 9728: the resource is the server's URL, compared without a trailing slash or fragment. */
export function sameResource(a: string, b: string): boolean {
  const normal = (s: string) => {
    const url = new URL(s);
    url.hash = '';
    return url.href.replace(/\/$/, '');
  };
  try {
    return normal(a) === normal(b);
  } catch {
    return false;
  }
}
