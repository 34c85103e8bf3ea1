// The HTTP edge: POST /mcp (every upstream, aggregated) and POST /servers/<name>/mcp (one upstream), read
// top to bottom in the order a request meets each check.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono, type Context } from 'hono';
import type { Upstream } from '../../bridge/upstream.js';
import { ANONYMOUS_PRINCIPAL, type Principal } from '../../policy/principal.js';
import type { ListenHub } from '../notify/listen-hub.js';
import { httpStatusOf } from '../protocol/error-status.js';
import { ErrorCode, isObject, type JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { Log } from '../infra/log.js';
import { META } from '../protocol/mcp.js';
import type { LegacyClients, LegacyExchange } from '../legacy-client/legacy-clients.js';
import type { GatewayMetrics, RequestOutcome } from '../ops/metrics.js';
import type { Security } from '../security.js';
import { addResourceMetadataRoutes, authRefusal, metadataUrlFor, rateRefusal } from './access.js';
import { authContext, principalContexts } from './caller-context.js';
import { answerPreflight, corsHeaders } from './cors.js';
import { digest, type PeerTrust } from '../mrtr/peer-trust.js';
import { FORWARDED_HEADER, forwardedCaller, forwardRequest, requestPath } from './forward.js';
import { checkAccept, checkContentType, MAX_JSON_DEPTH, nestsDeeperThan, tooLarge, tooLargeHeaders } from './http-rules.js';
import { exchangeOf, mcpEndpointName, refuse, send, writeJson, type NodeExchange } from './exchange.js';
import { listAllTools } from './list-all-tools.js';
import { ClientGone, forwardedParamHeaders, NodeHeaders, readBody } from './node-io.js';
import { originChecker } from './origin.js';
import { ToolHeaderIndex } from './param-headers.js';
import { addOpsRoutes, seesDetails, type OpsOptions } from './ops-routes.js';
import { traceIdOf } from './trace.js';
import { reject } from './rejection.js';
import type { RequestTracker } from './request-tracker.js';
import { checkMessage } from './request-rules.js';
import type { Verdict } from './policy-guard.js';
import { respondJson, respondSse, unchanged, type CallOptions, type Shape } from './respond.js';

export interface EdgeOptions {
  upstreams: ReadonlyMap<string, Upstream>;
  /** Serves /mcp when given. */
  aggregate: Upstream | undefined;
  allowedOrigins: readonly string[];
  maxBodyBytes: number;
  listen: ListenHub;
  /** Keys the hash of a caller's credentials that keeps its private cache entries apart. */
  contextKey: Buffer;
  /** Finds the replica holding a call a retry's requestState names (with Redis); absent: never forwards. */
  retries?: RetryRouting;
  /** Authentication, policies, rate limits and audit as of now (a reload swaps them). */
  security: () => Security;
  metrics?: GatewayMetrics;
  /** Serves 2025-era clients (initialize, sessions); absent: they are refused as before. */
  legacyClients?: LegacyClients;
  /** Counts requests in flight, says when draining, keeps recent denials. */
  tracker: RequestTracker;
  /** /healthz, /readyz, /metrics and the status page. */
  ops: Omit<OpsOptions, 'security' | 'draining' | 'originAllowed'>;
  log: Log;
}

export interface RetryRouting {
  /** This instance's id. */
  instance: string;
  /** The instance holding the call, when the token is the gateway's own and names another instance. */
  holderOf(requestState: string): string | undefined;
  /** A verified registry URL that mrtr.peers allows, or undefined. */
  lookup(instance: string): Promise<string | undefined>;
  /** Signs and opens the header a replica vouches for a forward's caller with (mrtr/peer-trust.ts). */
  trust: Pick<PeerTrust, 'vouch' | 'openVouch'>;
}

interface Endpoint {
  upstream: Upstream;
  /** x-mcp-header declarations seen in this endpoint's tools/list answers. */
  toolHeaders: ToolHeaderIndex;
}

const ALLOW_POST = { allow: 'POST, OPTIONS' };

export interface Edge {
  /** Everything but the plain MCP POSTs: ops routes, metadata, preflights, refusals. */
  app: Hono<{ Bindings: HttpBindings }>;
  /**
   * POST /mcp and POST /servers/<name>/mcp straight from Node's request, without Hono's router, context
   * and Request wrapper (about 2.6 KB of garbage per call); undefined when the request is not one of those.
   */
  serveMcpPost(incoming: IncomingMessage, outgoing: ServerResponse): Promise<unknown> | undefined;
}

export function createApp(options: EdgeOptions): Edge {
  const { maxBodyBytes, log } = options;
  const originAllowed = originChecker(options.allowedOrigins);
  const tracker = options.tracker;
  const principalContext = principalContexts(options.contextKey);
  // Looked up per request: a reload may add, replace or remove servers.
  const endpoints = new Map<string, Endpoint>();
  const endpointOf = (name: string): Endpoint | undefined => {
    const upstream = options.upstreams.get(name);
    if (!upstream) return undefined;
    let endpoint = endpoints.get(name);
    if (endpoint?.upstream !== upstream) endpoints.set(name, (endpoint = { upstream, toolHeaders: new ToolHeaderIndex() }));
    return endpoint;
  };
  const aggregate: Endpoint | undefined = options.aggregate && { upstream: options.aggregate, toolHeaders: new ToolHeaderIndex() };
  const paths = (): string[] => [...(aggregate ? ['/mcp'] : []), ...[...options.upstreams.keys()].map((n) => `/servers/${n}/mcp`)];
  const app = new Hono<{ Bindings: HttpBindings }>();

  async function serve(c: NodeExchange, endpoint: Endpoint | undefined, name: string, verb: Verb = 'POST'): Promise<Response> {
    // While draining, requests are still served: /readyz tells balancers to stop sending them, and the
    // listener's drain (http-drain.ts) ends each connection after its answer.
    tracker.begin();
    const metrics = options.metrics;
    metrics?.requestStarted();
    const started = performance.now();
    // What the metrics record of this request; each step that answers says how it ended.
    const seen: Seen = { method: undefined, outcome: 'rejected' };
    try {
      return await serveTracked(c, endpoint, name, started, seen, verb);
    } catch (error) {
      seen.outcome = 'error';
      throw error;
    } finally {
      tracker.end();
      metrics?.requestFinished(endpoint ? (endpoint === aggregate ? 'mcp' : name) : 'unknown', seen.method, seen.outcome, (performance.now() - started) / 1000);
    }
  }

  async function serveTracked(c: NodeExchange, endpoint: Endpoint | undefined, name: string, started: number, seen: Seen, verb: Verb): Promise<Response> {
    const { incoming, outgoing } = c;
    const origin = incoming.headers.origin;
    if (!originAllowed(origin)) {
      return send(c, reject(403, null, ErrorCode.InvalidRequest, `Origin ${origin} is not allowed; add it to listen.allowedOrigins to let browsers from it in`));
    }
    const cors = origin === undefined ? undefined : corsHeaders(origin);
    // Requests in flight keep the security they started with, whatever a reload installs meanwhile.
    const security = options.security();
    const audit = security.audit;
    const server = endpoint === aggregate ? undefined : name;
    const record = (principal: Principal, method: string, verdict: Pick<Verdict, 'allowed' | 'rule' | 'target'>, args?: unknown, traceId?: string): void => {
      if (!verdict.allowed) tracker.denied({ time: new Date().toISOString(), principal: principal.id, method, target: verdict.target, rule: verdict.rule });
      audit?.record({
        principal: principal.id,
        via: principal.via,
        endpoint: server ?? 'mcp',
        method,
        target: verdict.target,
        decision: verdict.allowed ? 'allow' : 'deny',
        rule: verdict.rule,
        latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
        ...(args !== undefined && audit.includeArguments && { arguments: args }),
        ...(traceId && { traceId }),
      });
    };

    let principal = ANONYMOUS_PRINCIPAL;
    // A retry another replica forwarded carries no credentials: that replica vouches for the caller.
    const vouched = forwardedCaller(incoming, options.retries?.trust);
    if (vouched === null) {
      record(ANONYMOUS_PRINCIPAL, 'unknown', { allowed: false, rule: 'forwarded request without a valid replica signature' });
      return send(c, reject(403, null, ErrorCode.InvalidRequest, `Only replicas sharing mrtr.secret forward requests; a client must not send ${FORWARDED_HEADER}`), cors);
    }
    if (vouched) principal = vouched.principal;
    else if (security.authenticator.enabled) {
      let outcome = security.authenticator.authenticate(incoming.headers.authorization);
      if (outcome instanceof Promise) outcome = await outcome;
      if (!outcome.ok) {
        record(ANONYMOUS_PRINCIPAL, 'unknown', { allowed: false, rule: `authentication: ${outcome.reason}` });
        seen.outcome = 'unauthenticated';
        return refuse(c, authRefusal(security, outcome, metadataUrlFor(security, incoming.headers, c.path)), cors);
      }
      principal = outcome.principal;
    }
    const grant = security.guard ? security.policies.grantFor(principal) : undefined;
    // A server this caller may reach nothing on does not exist for it.
    if (!endpoint || (grant && server !== undefined && !grant.reaches(server))) {
      // With authentication on, an anonymous caller learns nothing of the map; others see what they reach.
      const hidden = security.authenticator.enabled && principal.via === 'anonymous';
      const shown = hidden ? [] : grant ? paths().filter((p) => p === '/mcp' || grant.reaches(p.slice('/servers/'.length, -'/mcp'.length))) : paths();
      return send(c, reject(404, null, ErrorCode.InvalidRequest, `No server named '${name}'${shown.length ? `. Endpoints: ${shown.join(', ')}` : ''}`), cors);
    }
    const limit = grant?.rateLimit ?? security.defaultRateLimit;
    if (limit && security.rateLimiter) {
      let taken = security.rateLimiter.take(principal.id, limit);
      if (taken instanceof Promise) taken = await taken;
      if (!taken.allowed) {
        record(principal, 'unknown', { allowed: false, rule: 'rate limit' });
        seen.outcome = 'rate_limited';
        options.metrics?.rateLimited(server ?? 'mcp');
        return refuse(c, rateRefusal(principal, limit, taken.retryAfterMs), cors);
      }
    }

    const callerContext = vouched ? vouched.context : security.authenticator.enabled ? principalContext(principal) : authContext(options.contextKey, incoming.headers.authorization);
    const ep = endpoint;
    /** A 2025 client's exchange: the legacy adapter, with the modern core (policy, upstream, view) to call. */
    const legacyExchange = (body: unknown, sessionHeader: string | undefined): LegacyExchange => ({
      body,
      sessionHeader,
      endpoint: server ?? 'mcp',
      upstream: server,
      caller: callerContext,
      outgoing,
      signal: new ClientGone(outgoing),
      headers: cors ?? {},
      access: grant && { reaches: (upstream) => grant.reaches(upstream), reads: (uri, upstream) => grant.allows('resources', upstream, uri).allowed },
      execute: async (request, options) => {
        const call: CallOptions = {
          forwardHeaders: request.method === 'tools/call' ? forwardedParamHeaders(incoming.headers) : undefined,
          authContext: callerContext,
          reach: grant,
        };
        const args = request.method === 'tools/call' ? request.params?.arguments : undefined;
        if (grant && security.guard) {
          const guard = security.guard;
          const verdict = await guard.check(server, request, grant, principal, () => listAllTools(ep.upstream, request, call, (page) => guard.shape(server, 'tools/list', page, grant)));
          record(principal, request.method, verdict, args);
          if (verdict.refusal) return verdict.refusal;
        } else {
          record(principal, request.method, AUTHENTICATED, args);
        }
        const upstream = (server === undefined ? ep : endpointOf(server) ?? ep).upstream;
        const response = await upstream.request(request, { ...call, signal: options.signal, onNotification: options.onNotification });
        const learned = request.method === 'tools/list' ? learnTools(ep, response) : response;
        return grant && security.guard ? security.guard.shape(server, request.method, learned, grant) : learned;
      },
    });
    if (verb !== 'POST') {
      // A 2025 session's GET stream, or its end.
      const legacy = options.legacyClients!;
      const exchange = legacyExchange(undefined, incoming.headers['mcp-session-id'] as string | undefined);
      seen.outcome = 'ok';
      if (verb === 'GET') legacy.stream(exchange);
      else await legacy.end(exchange);
      return RESPONSE_ALREADY_SENT;
    }

    const headers = new NodeHeaders(incoming.headers);
    const transportProblem = checkContentType(headers.get('content-type')) ?? checkAccept(headers.get('accept'));
    if (transportProblem) return send(c, transportProblem, cors);

    const text = await readBody(incoming, maxBodyBytes);
    if (text === null) return RESPONSE_ALREADY_SENT; // the client went away mid-body: nobody to answer
    if (text === undefined) return send(c, tooLarge(maxBodyBytes), { ...cors, ...tooLargeHeaders(incoming.headers['content-length']) });
    if (vouched && digest(text) !== vouched.bodyDigest) return send(c, reject(403, null, ErrorCode.InvalidRequest, 'This forwarded body is not the one its replica vouched for'), cors);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return send(c, reject(400, null, ErrorCode.ParseError, 'Parse error: the body is not valid JSON'), cors);
    }
    if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
      return send(c, reject(400, null, ErrorCode.InvalidRequest, `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep; flatten it`), cors);
    }

    // The body decides the era: modern _meta wins; initialize, or a request on a session, is a 2025 client's.
    const sessionHeader = headers.get('mcp-session-id') ?? undefined;
    if (options.legacyClients?.claims(body, sessionHeader)) {
      seen.method = isObject(body) && typeof body.method === 'string' ? body.method : undefined;
      seen.outcome = 'ok';
      await options.legacyClients.post(legacyExchange(body, sessionHeader));
      return RESPONSE_ALREADY_SENT;
    }

    const checked = checkMessage(body, headers, endpoint.toolHeaders);
    if (checked.kind === 'rejected') return send(c, checked.rejection, cors);
    if (checked.kind === 'notification') {
      seen.outcome = 'ok';
      // Over HTTP a client cancels by closing its stream; no client notification needs forwarding.
      log.debug({ endpoint: name, method: checked.message.method }, 'notification accepted');
      outgoing.writeHead(202, cors);
      outgoing.end();
      return RESPONSE_ALREADY_SENT;
    }

    const message = checked.message;
    seen.method = message.method;
    const call: CallOptions = {
      forwardHeaders: message.method === 'tools/call' ? forwardedParamHeaders(incoming.headers) : undefined,
      authContext: callerContext,
      reach: grant,
    };
    const args = message.method === 'tools/call' ? message.params?.arguments : undefined;
    const traceId = traceIdOf(message.params?._meta);
    let verdict: Verdict = AUTHENTICATED;
    if (grant && security.guard) {
      const guard = security.guard;
      verdict = await guard.check(server, message, grant, principal, () => listAllTools(endpoint.upstream, message, call, (page) => guard.shape(server, 'tools/list', page, grant)));
      if (verdict.refusal) {
        record(principal, message.method, verdict, args, traceId);
        seen.outcome = 'denied';
        options.metrics?.denied(server ?? 'mcp', message.method);
        return writeJson(outgoing, httpStatusOf(verdict.refusal), verdict.refusal, cors);
      }
    }

    if (cors) for (const [key, value] of Object.entries(cors)) outgoing.setHeader(key, value);
    if (message.method === 'subscriptions/listen') {
      record(principal, message.method, verdict, undefined, traceId);
      seen.outcome = 'ok';
      options.listen.open(message, outgoing, server, grant && {
        reaches: (upstream) => grant.reaches(upstream),
        reads: (uri, upstream) => grant.allows('resources', upstream, uri).allowed,
      });
      return RESPONSE_ALREADY_SENT;
    }
    const requestState = message.params?.requestState;
    if (typeof requestState === 'string' && options.retries && incoming.headers[FORWARDED_HEADER] === undefined) {
      const holder = options.retries.holderOf(requestState);
      const base = holder === undefined ? undefined : await options.retries.lookup(holder);
      const vouch = base === undefined ? '' : options.retries.trust.vouch(principal, callerContext, requestPath(incoming), text);
      if (base !== undefined && (await forwardRequest(base, incoming, text, outgoing, options.retries.instance, vouch))) {
        seen.outcome = 'ok';
        record(principal, message.method, { ...verdict, rule: `${verdict.rule}; retry forwarded to instance ${holder}` }, args, traceId);
        return RESPONSE_ALREADY_SENT;
      }
    }
    const learn: Shape = message.method === 'tools/list' ? (response) => learnTools(endpoint, response) : unchanged;
    const filtered: Shape = grant && security.guard
      ? ((guard, kept) => (response) => guard.shape(server, message.method, learn(response), kept))(security.guard, grant)
      : learn;
    // Not shaped means the client went away before the answer.
    seen.outcome = 'cancelled';
    const shape: Shape = (response) => {
      seen.outcome = 'error' in response ? 'error' : 'ok';
      return filtered(response);
    };
    const meta = message.params?._meta;
    // The server's upstream as of now: a reload may have replaced it while this request was authenticated and read.
    const upstream = (server === undefined ? endpoint : endpointOf(server) ?? endpoint).upstream;
    // Progress and log messages travel on the request's own stream, so those requests are answered with one.
    if (isObject(meta) && (meta.progressToken !== undefined || meta[META.logLevel] !== undefined)) await respondSse(upstream, message, outgoing, shape, call);
    else await respondJson(upstream, message, outgoing, shape, call);
    record(principal, message.method, verdict, args, traceId);
    return RESPONSE_ALREADY_SENT;
  }

  addOpsRoutes(app, { ...options.ops, originAllowed, security: options.security, draining: () => tracker.draining });
  addResourceMetadataRoutes(app, options.security);

  // Unusual spellings of the MCP paths (percent-escapes and the like) still arrive here, through Hono.
  if (aggregate) app.post('/mcp', (c) => serve(exchangeOf(c), aggregate, 'mcp'));
  app.post('/servers/:name/mcp', (c) => serve(exchangeOf(c), endpointOf(c.req.param('name')), c.req.param('name')));

  for (const path of ['/mcp', '/servers/:name/mcp']) {
    app.options(path, (c) => answerPreflight(c, originAllowed, ALLOW_POST));
    app.on(['GET', 'DELETE', 'PUT', 'PATCH'], path, (c) => {
      const method = c.req.method;
      if (options.legacyClients && (method === 'GET' || method === 'DELETE') && c.req.header('mcp-session-id') !== undefined) {
        const name = c.req.param('name') ?? 'mcp';
        return serve(exchangeOf(c), name === 'mcp' && path === '/mcp' ? aggregate : endpointOf(name), name, method);
      }
      return send(c, reject(405, null, ErrorCode.InvalidRequest, 'This endpoint takes POST (MCP 2026-07-28 has no GET stream and no sessions; 2025 clients: initialize first, then GET or DELETE with its Mcp-Session-Id)'), ALLOW_POST);
    });
  }

  function serveMcpPost(incoming: IncomingMessage, outgoing: ServerResponse): Promise<unknown> | undefined {
    if (incoming.method !== 'POST') return undefined;
    const name = mcpEndpointName(incoming.url ?? '');
    if (name === undefined || (name === '' && !aggregate)) return undefined;
    const exchange: NodeExchange = { incoming, outgoing, path: name === '' ? '/mcp' : `/servers/${name}/mcp` };
    const served = name === '' ? serve(exchange, aggregate, 'mcp') : serve(exchange, endpointOf(name), name);
    return served.catch((error: unknown) => {
      if (!outgoing.headersSent) return internalError(exchange, error, exchange.path);
      log.error({ err: error, path: exchange.path }, 'unexpected error in the HTTP edge');
      outgoing.destroy(); // half an answer must not pass for a whole one
    });
  }

  /** What an exception in the edge answers, on either route: logged in full, a fixed message to the caller. */
  function internalError(c: NodeExchange | Context, error: unknown, path: string): Response {
    log.error({ err: error, path }, 'unexpected error in the HTTP edge');
    return send(c, reject(500, null, ErrorCode.InternalError, 'Internal error in mcp-gateway; see the gateway log'));
  }

  app.notFound(async (c) => {
    const details = await seesDetails(options.security(), options.ops.operators(), c.env.incoming.headers.authorization);
    return send(c, reject(404, null, ErrorCode.InvalidRequest, `Nothing at ${c.req.path}${details ? `. MCP endpoints: ${paths().join(', ')}` : ''}`));
  });

  app.onError((error, c) => internalError(c, error, c.req.path));

  return { app, serveMcpPost };
}

type Verb = 'POST' | 'GET' | 'DELETE';

interface Seen {
  method: string | undefined;
  outcome: RequestOutcome;
}

const AUTHENTICATED: Verdict = { allowed: true, rule: 'authenticated; no policies configured' };

function learnTools(endpoint: Endpoint, response: JsonRpcResponse): JsonRpcResponse {
  if ('result' in response) endpoint.toolHeaders.learn(response.result);
  return response;
}
