// The admit step: whether this caller may send anything here at all — its origin, who it is (credentials,
// or the replica that vouches for a forwarded retry), whether the endpoint exists for it, and its rate.
// Fills in the call's principal, grant and cache context; answers and returns the Response when it refuses.
import type { AuthResult } from '../../policy/authenticate.js';
import { ANONYMOUS_PRINCIPAL } from '../../policy/principal.js';
import type { RateDecision } from '../../policy/rate-limit.js';
import type { RateLimitSetting } from '../../policy/settings.js';
import { ErrorCode } from '../../protocol/jsonrpc.js';
import { authRefusal, metadataUrlFor, rateRefusal } from './access.js';
import { announcedMethod } from './announced-method.js';
import { record } from './audit-step.js';
import { authContext } from './caller-context.js';
import type { McpCall } from './call.js';
import { corsHeaders } from './cors.js';
import { pathsFor } from './endpoint-list.js';
import { refuse, send } from './exchange.js';
import { FORWARDED_HEADER, forwardedCaller } from './forward.js';
import { reject } from './rejection.js';

/**
 * Each check awaits only when it must (credentials checked remotely, a rate shared in Redis): most calls get no promise
 * here.
 */
export function admit(call: McpCall): Response | undefined | Promise<Response | undefined> {
  const { edge, exchange } = call;
  const origin = exchange.incoming.headers.origin;
  if (!edge.originAllowed(origin)) {
    return send(
      exchange,
      reject(
        403,
        null,
        ErrorCode.InvalidRequest,
        `Origin ${origin} is not allowed; add it to listen.allowedOrigins to let browsers from it in`,
      ),
    );
  }
  call.cors = origin === undefined ? undefined : corsHeaders(origin);
  const identified = identify(call);
  if (identified instanceof Promise) return identified.then((refused) => refused ?? reachAndRate(call));
  return identified ?? reachAndRate(call);
}

/** Once the caller is known: whether the endpoint exists for it, then its rate; then its cache context. */
function reachAndRate(call: McpCall): Response | undefined | Promise<Response | undefined> {
  const { security, exchange, cors } = call;
  const grant = (call.grant = security.guard ? security.policies.grantFor(call.principal) : undefined);
  // A server this caller may reach nothing on does not exist for it.
  if (!call.endpoint || (grant && call.server !== undefined && !grant.reaches(call.server)))
    return send(exchange, noSuchEndpoint(call), cors);
  const limited = rateLimit(call);
  if (limited instanceof Promise) return limited.then((refused) => refused ?? admitted(call));
  return limited ?? admitted(call);
}

function admitted(call: McpCall): Response | undefined {
  const { edge, security } = call;
  call.callerContext = call.vouched
    ? call.vouched.context
    : security.authenticator.enabled
      ? edge.principalContext(call.principal)
      : authContext(edge.contextKey, call.exchange.incoming.headers.authorization);
  // Before the body is read: a caller with too much in flight is refused before it costs a parse.
  const load = edge.load;
  if (load === undefined) return undefined;
  if (load.enter(call.callerContext)) {
    call.counted = true;
    return undefined;
  }
  record(call, call.principal, refusedMethod(call), { allowed: false, rule: 'requests in flight per principal' });
  call.outcome = 'rate_limited';
  return refuse(call.exchange, load.requestRefusal(call.principal.id), call.cors);
}

/** Who is calling: the replica-vouched caller of a forwarded retry, else the credentials' principal. */
function identify(call: McpCall): Response | undefined | Promise<Response | undefined> {
  const { exchange, security, cors } = call;
  const incoming = exchange.incoming;
  // A retry another replica forwarded carries no credentials: that replica vouches for the caller.
  const vouched = forwardedCaller(incoming, call.edge.retries?.trust);
  if (vouched === null) {
    record(call, ANONYMOUS_PRINCIPAL, refusedMethod(call), {
      allowed: false,
      rule: 'forwarded request without a valid replica signature',
    });
    return send(
      exchange,
      reject(
        403,
        null,
        ErrorCode.InvalidRequest,
        `Only replicas sharing mrtr.secret forward requests; a client must not send ${FORWARDED_HEADER}`,
      ),
      cors,
    );
  }
  if (vouched) {
    call.vouched = vouched;
    call.principal = vouched.principal;
    return undefined;
  }
  if (!security.authenticator.enabled) return undefined;
  const outcome = security.authenticator.authenticate(incoming.headers.authorization);
  return outcome instanceof Promise
    ? outcome.then((known) => authenticated(call, known))
    : authenticated(call, outcome);
}

/** The credentials' verdict applied: the caller's principal, or the refusal (401/403) it gets. */
function authenticated(call: McpCall, outcome: AuthResult): Response | undefined {
  const { exchange, security, cors } = call;
  const incoming = exchange.incoming;
  if (!outcome.ok) {
    record(call, ANONYMOUS_PRINCIPAL, refusedMethod(call), {
      allowed: false,
      rule: `authentication: ${outcome.reason}`,
    });
    call.outcome = 'unauthenticated';
    return refuse(
      exchange,
      authRefusal(security, outcome, metadataUrlFor(security, incoming.headers, exchange.path)),
      cors,
    );
  }
  call.principal = outcome.principal;
  return undefined;
}

/** The 404 for a server that does not exist for this caller: it learns only of what it may reach. */
function noSuchEndpoint(call: McpCall) {
  const { grant, security } = call;
  // With authentication on, an anonymous caller learns nothing of the map; others see what they reach.
  const hidden = security.authenticator.enabled && call.principal.via === 'anonymous';
  const shown = hidden ? [] : pathsFor(call.edge, grant);
  const endpoints = shown.length ? `. Endpoints: ${shown.join(', ')}` : '';
  // /search/mcp is missing only when turned off (a server named 'search' lives under /servers/).
  if (call.name === 'search' && !call.exchange.path.startsWith('/servers/')) {
    return reject(
      404,
      null,
      ErrorCode.InvalidRequest,
      `Search mode is off: search.enabled is false in the config; set it to true to serve /search/mcp${endpoints}`,
    );
  }
  // Server names hold no '/', so `profiles/<name>` can only be a profile's endpoint.
  const what = call.name.startsWith('profiles/')
    ? `profile named '${call.name.slice('profiles/'.length)}'`
    : `server named '${call.name}'`;
  return reject(404, null, ErrorCode.InvalidRequest, `No ${what}${endpoints}`);
}

function rateLimit(call: McpCall): Response | undefined | Promise<Response | undefined> {
  const { security, principal } = call;
  const limit = call.grant?.rateLimit ?? security.defaultRateLimit;
  if (!limit || !security.rateLimiter) return undefined;
  const taken = security.rateLimiter.take(principal.id, limit);
  return taken instanceof Promise ? taken.then((decided) => rated(call, limit, decided)) : rated(call, limit, taken);
}

/** The rate limiter's decision applied: nothing, or the 429 with Retry-After. */
function rated(call: McpCall, limit: RateLimitSetting, taken: RateDecision): Response | undefined {
  const { principal } = call;
  if (taken.allowed) return undefined;
  record(call, principal, refusedMethod(call), { allowed: false, rule: 'rate limit' });
  call.outcome = 'rate_limited';
  call.edge.metrics?.rateLimited(call.server ?? call.name);
  return refuse(call.exchange, rateRefusal(principal, limit, taken.retryAfterMs), call.cors);
}

/**
 * A request refused here was never read: its method is what its Mcp-Method header announced (bounded by
 * announcedMethod), for the metrics and the denial alike; "unknown" only when it announced none.
 */
function refusedMethod(call: McpCall): string {
  call.method = announcedMethod(call.exchange);
  return call.method ?? 'unknown';
}
