// The edge's side of authentication and rate limiting: the 401/403 challenge that points a client at the
// Protected Resource Metadata (RFC 9728), that document itself, and the 429. Deciding is policy/'s job;
// this module words the answers.
import type { IncomingHttpHeaders } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AuthFailure } from '../../policy/authenticate.js';
import type { Principal } from '../../policy/principal.js';
import {
  PROTECTED_RESOURCE_WELL_KNOWN,
  protectedResourceMetadata,
  resourceMetadataUrl,
} from '../../policy/resource-metadata.js';
import type { RateLimitSetting } from '../../policy/settings.js';
import { ErrorCode } from '../../protocol/jsonrpc.js';
import type { Security } from '../../policy/security.js';
import { send } from './exchange.js';
import { type Refusal, reject } from './rejection.js';

export type { Refusal };

export { PROTECTED_RESOURCE_WELL_KNOWN };

/** Whether the gateway names an authorization server, so serving metadata makes sense. */
export function servesResourceMetadata(security: Security): boolean {
  return security.auth.jwt !== undefined || security.auth.oauth.authorizationServers.length > 0;
}

/** The metadata URL a challenge names: the configured resource's, or one on the host the client used. */
export function metadataUrlFor(security: Security, headers: IncomingHttpHeaders, path: string): string | undefined {
  if (!servesResourceMetadata(security)) return undefined;
  const resource = security.auth.oauth.resource;
  return resource ? resourceMetadataUrl(resource) : `${requestOrigin(headers)}${PROTECTED_RESOURCE_WELL_KNOWN}${path}`;
}

/**
 * GET /.well-known/oauth-protected-resource[/<path>]: the document for the resource at <path>. RFC 9728
 * §3.3 wants its `resource` to be the one the URL was formed from, so with `oauth.resource` configured only
 * that resource's own metadata URL answers (the one every challenge names).
 */
export function resourceMetadataDocument(
  security: Security,
  headers: IncomingHttpHeaders,
  wellKnownPath: string,
): object | undefined {
  if (!servesResourceMetadata(security)) return undefined;
  const configured = security.auth.oauth.resource;
  if (configured !== undefined) {
    if (new URL(resourceMetadataUrl(configured)).pathname !== wellKnownPath) return undefined;
    return protectedResourceMetadata(security.auth, configured);
  }
  const path = wellKnownPath.slice(PROTECTED_RESOURCE_WELL_KNOWN.length) || '/';
  return protectedResourceMetadata(security.auth, `${requestOrigin(headers)}${path}`);
}

/** GET /.well-known/oauth-protected-resource[/<path>]: public by design (RFC 9728), from any origin. */
export function addResourceMetadataRoutes(app: Hono<{ Bindings: HttpBindings }>, security: () => Security): void {
  for (const path of [`${PROTECTED_RESOURCE_WELL_KNOWN}/*`, PROTECTED_RESOURCE_WELL_KNOWN]) {
    app.get(path, (c) => {
      const document = resourceMetadataDocument(security(), c.env.incoming.headers, c.req.path);
      if (!document)
        return send(
          c,
          reject(
            404,
            null,
            ErrorCode.InvalidRequest,
            'No OAuth protected resource metadata: this gateway has no auth.jwt or auth.oauth.authorizationServers ' +
              'configured',
          ),
        );
      return c.json(document, 200, { 'access-control-allow-origin': '*', 'cache-control': 'max-age=300' });
    });
  }
}

export function authRefusal(security: Security, failure: AuthFailure, metadataUrl: string | undefined): Refusal {
  const challenge = security.authenticator.challenge(failure, metadataUrl);
  const where = metadataUrl ? ` (the WWW-Authenticate header names the metadata that says where to get a token)` : '';
  let message: string;
  if (failure.status === 403) {
    message =
      `Forbidden: ${failure.reason}; request a token with scope ` +
      `"${security.authenticator.requiredScopes.join(' ')}"`;
  } else if (failure.error === undefined) {
    message = `Authentication required: send Authorization: Bearer <API key or access token>${where}`;
  } else {
    message = `Invalid credentials: ${failure.reason}${where}`;
  }
  return {
    ...reject(failure.status, null, ErrorCode.InvalidRequest, message),
    headers: { 'www-authenticate': challenge },
  };
}

export function rateRefusal(principal: Principal, limit: RateLimitSetting, retryAfterMs: number): Refusal {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return {
    ...reject(
      429,
      null,
      ErrorCode.InvalidRequest,
      `Rate limit exceeded for ${principal.id}: ${limit.requestsPerMinute} requests per minute (burst ` +
        `${limit.burst}); retry after ${seconds} s`,
    ),
    headers: { 'retry-after': String(seconds) },
  };
}

/** The origin the client addressed; https only when a proxy in front says so. */
function requestOrigin(headers: IncomingHttpHeaders): string {
  const forwarded = headers['x-forwarded-proto'];
  const proto = forwarded === 'https' || forwarded === 'http' ? forwarded : 'http';
  return `${proto}://${headers.host ?? 'localhost'}`;
}
