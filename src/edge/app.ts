// The HTTP edge: POST /mcp (every upstream, aggregated) and POST /servers/<name>/mcp (one upstream). A
// request meets its steps in this order, each in its own module: admit (admit.ts) → read (read.ts) →
// route (route.ts) → judge (judge.ts) → execute (execute.ts; McpCall.request is the core both eras call)
// → respond (respond.ts, shaped by McpCall.shape) → audit (audit.ts; metrics in serve()). A 2025 client's
// message leaves after read for the legacy adapter (legacy-exchange.ts), which calls the same core.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import type { Upstream } from '../../bridge/upstream.js';
import type { Security } from '../../policy/security.js';
import type { Aggregator } from '../aggregate/aggregator.js';
import type { Log } from '../infra/log.js';
import type { LegacyClients } from '../legacy-client/legacy-clients.js';
import type { ListenHub } from '../notify/listen-hub.js';
import type { GatewayMetrics } from '../ops/metrics.js';
import { ErrorCode } from '../protocol/jsonrpc.js';
import { addResourceMetadataRoutes } from './access.js';
import { honoAnswer } from './answered.js';
import { admit } from './admit.js';
import { McpCall, type EdgeContext, type Endpoint } from './call.js';
import { principalContexts } from './caller-context.js';
import { answerPreflight } from './cors.js';
import { exchangeOf, mcpEndpointName, send, writeJson, type NodeExchange } from './exchange.js';
import { execute } from './execute.js';
import { judge, refuse } from './judge.js';
import { serveLegacyPost, serveLegacySession } from './legacy-exchange.js';
import { addOpsRoutes, PROBE_HEADERS, probe, seesDetails, type OpsOptions } from './ops-routes.js';
import { originChecker } from './origin.js';
import { ToolHeaderIndex } from './param-headers.js';
import { read } from './read.js';
import { reject } from './rejection.js';
import type { RequestTracker } from './request-tracker.js';
import type { RetryRouting } from './retry-routing.js';
import { route } from './route.js';
import { endRequestSpan, spanForUnread, startRequestSpan } from './tracing.js';
import type { JsonRpcRequest } from '../protocol/jsonrpc.js';
import type { Verdict } from '../../policy/guard.js';
import type { GatewayTracer } from '../telemetry/tracer.js';

export type { RetryRouting } from './retry-routing.js';

export interface EdgeOptions {
  upstreams: ReadonlyMap<string, Upstream>;
  /** Serves /mcp when given; its router places /mcp requests. */
  aggregate: Aggregator | undefined;
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
  /** Traces each request when set (tracing on); undefined: no span, nothing allocated for one. */
  tracer?: GatewayTracer;
  /** /healthz, /readyz, /metrics and the status page. */
  ops: Omit<OpsOptions, 'security' | 'draining' | 'originAllowed'>;
  log: Log;
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
  /**
   * GET /healthz and GET /readyz, as plainly spelled, on the same Node path: orchestrators probe them every few
   * seconds, and Hono's adapter (with Node's fetch implementation, ~12 MB) need not load for them.
   */
  serveProbe(incoming: IncomingMessage, outgoing: ServerResponse): Promise<unknown> | undefined;
}

type Verb = 'POST' | 'GET' | 'DELETE';

export function createApp(options: EdgeOptions): Edge {
  const edge = edgeContext(options);
  const { log } = options;
  const aggregate = edge.aggregate;
  const app = new Hono<{ Bindings: HttpBindings }>();
  const ops: OpsOptions = { ...options.ops, originAllowed: edge.originAllowed, security: options.security, draining: () => options.tracker.draining };
  addOpsRoutes(app, ops);
  addResourceMetadataRoutes(app, options.security);

  // Unusual spellings of the MCP paths (percent-escapes and the like) still arrive here, through Hono.
  if (aggregate) app.post('/mcp', (c) => honoAnswer(serve(edge, exchangeOf(c), aggregate, 'mcp')));
  app.post('/servers/:name/mcp', (c) => honoAnswer(serve(edge, exchangeOf(c), edge.endpointOf(c.req.param('name')), c.req.param('name'))));

  for (const path of ['/mcp', '/servers/:name/mcp']) {
    app.options(path, (c) => answerPreflight(c, edge.originAllowed, ALLOW_POST));
    app.on(['GET', 'DELETE', 'PUT', 'PATCH'], path, (c) => {
      const method = c.req.method;
      if (options.legacyClients && (method === 'GET' || method === 'DELETE') && c.req.header('mcp-session-id') !== undefined) {
        const name = c.req.param('name') ?? 'mcp';
        return honoAnswer(serve(edge, exchangeOf(c), name === 'mcp' && path === '/mcp' ? aggregate : edge.endpointOf(name), name, method));
      }
      return send(
        c,
        reject(
          405,
          null,
          ErrorCode.InvalidRequest,
          'This endpoint takes POST (MCP 2026-07-28 has no GET stream and no sessions; 2025 clients: initialize first, then GET or DELETE with its Mcp-Session-Id)',
        ),
        ALLOW_POST,
      );
    });
  }

  function serveMcpPost(incoming: IncomingMessage, outgoing: ServerResponse): Promise<unknown> | undefined {
    if (incoming.method !== 'POST') return undefined;
    const name = mcpEndpointName(incoming.url ?? '');
    if (name === undefined || (name === '' && !aggregate)) return undefined;
    const exchange: NodeExchange = { incoming, outgoing, path: name === '' ? '/mcp' : `/servers/${name}/mcp` };
    const served = name === '' ? serve(edge, exchange, aggregate, 'mcp') : serve(edge, exchange, edge.endpointOf(name), name);
    return served.catch((error: unknown) => {
      if (!outgoing.headersSent) return internalError(log, exchange, error, exchange.path);
      log.error({ err: error, path: exchange.path }, 'unexpected error in the HTTP edge');
      outgoing.destroy(); // half an answer must not pass for a whole one
    });
  }

  function serveProbe(incoming: IncomingMessage, outgoing: ServerResponse): Promise<unknown> | undefined {
    const path = incoming.url;
    if (incoming.method !== 'GET' || (path !== '/healthz' && path !== '/readyz')) return undefined;
    return Promise.resolve(probe(ops, path, incoming.headers.authorization)).then(
      ({ status, body }) => writeJson(outgoing, status, body, PROBE_HEADERS),
      (error: unknown) => internalError(log, { incoming, outgoing, path }, error, path),
    );
  }

  app.notFound(async (c) => {
    const details = await seesDetails(options.security(), options.ops.operators(), c.env.incoming.headers.authorization);
    return send(c, reject(404, null, ErrorCode.InvalidRequest, `Nothing at ${c.req.path}${details ? `. MCP endpoints: ${edge.paths().join(', ')}` : ''}`));
  });
  app.onError((error, c) => internalError(log, c, error, c.req.path));
  return { app, serveMcpPost, serveProbe };
}

/** Counts the request in and out (tracker, metrics) around its steps. */
async function serve(edge: EdgeContext, c: NodeExchange, endpoint: Endpoint | undefined, name: string, verb: Verb = 'POST'): Promise<Response> {
  // While draining, requests are still served: /readyz tells balancers to stop sending them, and the
  // listener's drain (http-drain.ts) ends each connection after its answer.
  edge.tracker.begin();
  edge.metrics?.requestStarted();
  const call = new McpCall(edge, c, endpoint, name, performance.now());
  let failure: unknown;
  try {
    return await serveTracked(call, verb);
  } catch (error) {
    call.outcome = 'error';
    failure = error;
    throw error;
  } finally {
    if (edge.tracer !== undefined) {
      if (call.span !== undefined) endRequestSpan(call, failure);
      else spanForUnread(edge.tracer, call);
    }
    edge.tracker.end();
    edge.metrics?.requestFinished(endpoint ? (endpoint === edge.aggregate ? 'mcp' : name) : 'unknown', call.method, call.outcome, (performance.now() - call.started) / 1000);
  }
}

/** One request, step by step; a step that answers (a refusal, a notification) ends it. */
async function serveTracked(call: McpCall, verb: Verb): Promise<Response> {
  let refused = admit(call);
  if (refused instanceof Promise) refused = await refused;
  if (refused) return refused;
  if (verb !== 'POST') return serveLegacySession(call, verb);
  const got = await read(call);
  if (!('kind' in got)) return got;
  if (got.kind === 'legacy') return serveLegacyPost(call, got.body, got.sessionHeader);
  const message = got.message;
  const tracer = call.edge.tracer;
  if (tracer === undefined) return serveMessage(call, message, got.text);
  startRequestSpan(tracer, call, message);
  return call.span!.run(() => serveMessage(call, message, got.text));
}

/** A modern message, read: where it goes, whether policy lets it, then its answer; no extra turn when judge answers at once. */
function serveMessage(call: McpCall, message: JsonRpcRequest, text: string): Response | Promise<Response> {
  route(call, message);
  const verdict = judge(call, message);
  return verdict instanceof Promise ? verdict.then((v) => decide(call, message, text, v)) : decide(call, message, text, verdict);
}

function decide(call: McpCall, message: JsonRpcRequest, text: string, verdict: Verdict): Response | Promise<Response> {
  if (verdict.refusal) return refuse(call, message, { ...verdict, refusal: verdict.refusal });
  return execute(call, message, text, verdict);
}

/** What an exception in the edge answers, on either route: logged in full, a fixed message to the caller. */
function internalError(log: Log, c: NodeExchange | Context, error: unknown, path: string): Response {
  log.error({ err: error, path }, 'unexpected error in the HTTP edge');
  return send(c, reject(500, null, ErrorCode.InternalError, 'Internal error in mcp-gateway; see the gateway log'));
}

/** What every request shares, built once: endpoints looked up per request, as a reload may change servers. */
function edgeContext(options: EdgeOptions): EdgeContext {
  const endpoints = new Map<string, Endpoint>();
  const aggregate: Endpoint | undefined = options.aggregate && { upstream: options.aggregate, toolHeaders: new ToolHeaderIndex() };
  return {
    upstreams: options.upstreams,
    aggregate,
    router: options.aggregate?.router,
    maxBodyBytes: options.maxBodyBytes,
    contextKey: options.contextKey,
    listen: options.listen,
    retries: options.retries,
    security: options.security,
    metrics: options.metrics,
    legacyClients: options.legacyClients,
    tracker: options.tracker,
    tracer: options.tracer,
    log: options.log,
    originAllowed: originChecker(options.allowedOrigins),
    principalContext: principalContexts(options.contextKey),
    endpointOf(name) {
      const upstream = options.upstreams.get(name);
      if (!upstream) return undefined;
      let endpoint = endpoints.get(name);
      if (endpoint?.upstream !== upstream) endpoints.set(name, (endpoint = { upstream, toolHeaders: new ToolHeaderIndex() }));
      return endpoint;
    },
    paths: () => [...(aggregate ? ['/mcp'] : []), ...[...options.upstreams.keys()].map((n) => `/servers/${n}/mcp`)],
  };
}
