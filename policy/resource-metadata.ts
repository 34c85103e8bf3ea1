// OAuth 2.0 Protected Resource Metadata (RFC 9728): how an MCP client finds the authorization server for this
// gateway and the scopes to request.

import type { AuthSetting } from './settings.js';

export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers?: string[];
  scopes_supported?: string[];
  bearer_methods_supported: ['header'];
  resource_name: string;
}

/**
 * The metadata document. `fallbackResource` is used when `oauth.resource` is unset (the edge derives it from
 * the request's Host).
 */
export function protectedResourceMetadata(auth: AuthSetting, fallbackResource: string): ProtectedResourceMetadata {
  const { oauth, jwt } = auth;
  const authorizationServers =
    oauth.authorizationServers.length > 0 ? [...oauth.authorizationServers] : jwt ? [jwt.issuer] : [];
  return {
    resource: oauth.resource ?? fallbackResource,
    // Empty arrays are left out: RFC 9728 makes these optional, and an empty list would read as "none exist".
    ...(authorizationServers.length > 0 && { authorization_servers: authorizationServers }),
    ...(oauth.scopes.length > 0 && { scopes_supported: [...oauth.scopes] }),
    // Tokens in query strings or form bodies end up in logs; the header is the only way in.
    bearer_methods_supported: ['header'],
    resource_name: 'mcp-gateway',
  };
}

/**
 * Where the metadata for `resource` lives (RFC 9728 §3.1): the well-known segment goes between the host and
 * the path. With `requestPath`, the path is that of the request (`/mcp` → `…/oauth-protected-resource/mcp`);
 * otherwise it is the resource's own, with a terminating slash removed.
 */
export function resourceMetadataUrl(resource: string, requestPath?: string): string {
  const url = new URL(resource);
  const raw = requestPath ?? url.pathname;
  const path = (raw.startsWith('/') ? raw : `/${raw}`).replace(/\/$/, '');
  const query = requestPath === undefined ? url.search : '';
  return `${url.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${path}${query}`;
}
