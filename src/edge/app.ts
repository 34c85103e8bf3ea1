// The HTTP edge: POST /mcp (every upstream, aggregated), POST /servers/<name>/mcp (one upstream), and views
// over /mcp: POST /profiles/<name>/mcp and /search/mcp (views.ts, search-step.ts). A
// request meets its steps in this order, each in its own module: admit (admit.ts) → read (read.ts) →
// route (route.ts) → judge (judge.ts) → execute (execute.ts; McpCall.request is the core both eras call)
// → respond (respond.ts, shaped by McpCall.shape) → audit (audit.ts; metrics in serve()). A 2025 client's
// message leaves after read for the legacy adapter (legacy-exchange.ts), which calls the same core.
import { withoutCapabilityLinks } from '../../protocol/capability-links.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import type { Upstream } from '../../bridge/upstream.js';
import type { Security } from '../../policy/security.js';
import type { Aggregator } from '../aggregate/index.js';
import type { Log } from '../../infra/log.js';
import type { LegacyClients } from '../legacy-client/index.js';
import type { ListenHub } from '../notify/index.js';
import type { GatewayMetrics } from '../ops/index.js';
import { ErrorCode } from '../../protocol/jsonrpc.js';
import { addResourceMetadataRoutes } from './access.js';
import { honoAnswer } from './answered.js';
import { admit } from './admit.js';
import { McpCall, type EdgeContext, type Endpoint, type SearchIndex } from './call.js';
import { principalContexts } from './caller-context.js';
import { CallerLoad, type CallerLimits } from './caller-load.js';
import { answerPreflight } from './cors.js';
import { exchangeOf, mcpEndpointName, send, viewEndpointName, writeJson, type NodeExchange } from './exchange.js';
import { execute } from './execute.js';
import { pathsFor } from './endpoint-list.js';
import { ANONYMOUS_PRINCIPAL } from '../../policy/principal.js';
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
import { endRequestSpan, spanForUnread, startRequestSpan } from './request-span.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { Verdict } from '../../policy/guard.js';
import type { GatewayTracer } from '../telemetry/index.js';
import { SEARCH_PROFILE, type Profile } from '../profiles/index.js';
import { answerHere, searchStep } from './search-step.js';
import { judgeTask, openTask, type TaskIdCodec } from '../tasks/index.js';
import { TASK_METHODS } from '../../protocol/mcp.js';

export type { RetryRouting } from './retry-routing.js';

export interface EdgeOptions {
  upstreams: ReadonlyMap<string, Upstream>;
  /** Serves /mcp when given; its router places /mcp requests. */
  aggregate: Aggregator | undefined;
  /** Profiles and search mode over /mcp (served only with /mcp); absent: none. */
  catalog?: CatalogView;
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
  /** Requests and streams one caller may hold at once (CALLER_LIMIT_DEFAULTS when left out). */
  callerLimits?: CallerLimits;
  /** /healthz, /readyz, /metrics and the status page. */
  ops: Omit<OpsOptions, 'security' | 'draining' | 'originAllowed'>;
  log: Log;
  /** The gateway's own task ids (src/tasks/task-ids.ts), keyed from mrtr.secret. */
  tasks: TaskIdCodec;
  /** Routes of parts wired beside the edge (the connect pages of src/credentials/). */
  addRoutes?(app: Hono<{ Bindings: HttpBindings }>): void;
}

/** The profiles as of now (a reload may change them) and the index search mode reads. */
export interface CatalogView extends SearchIndex {
  profile(name: string): Profile | undefined;
  /** /search/mcp's view; undefined when search.enabled is false. */
  searchMode(): Profile | undefined;
  profileNames(): string[];
}

type ViewsOf = Required<Pick<EdgeContext, 'viewOf'>>;

const ALLOW_POST = { allow: 'POST, OPTIONS' };
const MCP_PATHS = ['/mcp', '/servers/:name/mcp', '/profiles/:name/mcp', '/search/mcp'];

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
  const ops: OpsOptions = {
    ...options.ops,
    originAllowed: edge.originAllowed,
    security: options.security,
    draining: () => options.tracker.draining,
  };
  addOpsRoutes(app, ops);
  addResourceMetadataRoutes(app, options.security);
  options.addRoutes?.(app);

  // The endpoint a route serves, and its name in metrics and refusals.
  const endpointAt = (path: string, name: string | undefined): [Endpoint | undefined, string] => {
    if (path === '/mcp') return [aggregate, 'mcp'];
    if (path === '/search/mcp') return [edge.viewOf(''), 'search'];
    if (path.startsWith('/profiles/')) return [edge.viewOf(name!), `profiles/${name}`];
    return [edge.endpointOf(name!), name!];
  };
  // Unusual spellings of the MCP paths (percent-escapes and the like) still arrive here, through Hono.
  for (const path of MCP_PATHS) {
    if (path === '/mcp' && !aggregate) continue;
    app.post(path, (c) => honoAnswer(serve(edge, exchangeOf(c), ...endpointAt(path, c.req.param('name')))));
  }

  for (const path of MCP_PATHS) {
    app.options(path, (c) => answerPreflight(c, edge.originAllowed, ALLOW_POST));
    app.on(['GET', 'DELETE', 'PUT', 'PATCH'], path, (c) => {
      const method = c.req.method;
      if (
        options.legacyClients &&
        (method === 'GET' || method === 'DELETE') &&
        c.req.header('mcp-session-id') !== undefined
      ) {
        return honoAnswer(serve(edge, exchangeOf(c), ...endpointAt(path, c.req.param('name')), method));
      }
      return send(
        c,
        reject(
          405,
          null,
          ErrorCode.InvalidRequest,
          'This endpoint takes POST (MCP 2026-07-28 has no GET stream and no sessions; 2025 clients: initialize ' +
            'first, then GET or DELETE with its Mcp-Session-Id)',
        ),
        ALLOW_POST,
      );
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
    const shown = await pathsShown(edge, options, c.env.incoming.headers.authorization);
    return send(
      c,
      reject(
        404,
        null,
        ErrorCode.InvalidRequest,
        `Nothing at ${c.req.path}${shown.length ? `. MCP endpoints: ${shown.join(', ')}` : ''}`,
      ),
    );
  });
  app.onError((error, c) => internalError(log, c, error, c.req.path));
  return { app, serveMcpPost: (incoming, outgoing) => serveMcpPost(edge, log, incoming, outgoing), serveProbe };
}

/**
 * The MCP paths the 404 of an unknown path names: none to a caller who may not see the map (seesDetails),
 * and only those its grant lets it use to one who may (endpoint-list.ts).
 */
async function pathsShown(
  edge: EdgeContext,
  options: EdgeOptions,
  authorization: string | undefined,
): Promise<string[]> {
  const security = options.security();
  if (!(await seesDetails(security, options.ops.operators(), authorization))) return [];
  if (!security.guard) return edge.paths();
  const outcome = security.authenticator.enabled ? await security.authenticator.authenticate(authorization) : undefined;
  const principal = outcome === undefined ? ANONYMOUS_PRINCIPAL : outcome.ok ? outcome.principal : undefined;
  return principal === undefined ? [] : pathsFor(edge, security.policies.grantFor(principal));
}

/** The fast path: the plain spellings of the MCP paths, straight from Node's request (Edge.serveMcpPost). */
function serveMcpPost(
  edge: EdgeContext & ViewsOf,
  log: Log,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
): Promise<unknown> | undefined {
  const aggregate = edge.aggregate;
  if (incoming.method !== 'POST') return undefined;
  const url = incoming.url ?? '';
  const name = mcpEndpointName(url);
  let exchange: NodeExchange;
  let served: Promise<Response>;
  if (name !== undefined && (name !== '' || aggregate)) {
    exchange = { incoming, outgoing, path: name === '' ? '/mcp' : `/servers/${name}/mcp` };
    served = name === '' ? serve(edge, exchange, aggregate, 'mcp') : serve(edge, exchange, edge.endpointOf(name), name);
  } else {
    const view = aggregate ? viewEndpointName(url) : undefined;
    if (view === undefined) return undefined;
    exchange = { incoming, outgoing, path: view === '' ? '/search/mcp' : `/profiles/${view}/mcp` };
    served = serve(edge, exchange, edge.viewOf(view), view === '' ? 'search' : `profiles/${view}`);
  }
  return served.catch((error: unknown) => {
    if (!outgoing.headersSent) return internalError(log, exchange, error, exchange.path);
    log.error({ err: error, path: withoutCapabilityLinks(exchange.path) }, 'unexpected error in the HTTP edge');
    outgoing.destroy(); // half an answer must not pass for a whole one
  });
}

/** Counts the request in and out (tracker, metrics) around its steps. */
async function serve(
  edge: EdgeContext,
  c: NodeExchange,
  endpoint: Endpoint | undefined,
  name: string,
  verb: Verb = 'POST',
): Promise<Response> {
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
    if (call.counted) edge.load!.leave(call.callerContext);
    edge.tracker.end();
    edge.metrics?.requestFinished(
      endpoint ? (endpoint === edge.aggregate ? 'mcp' : name) : 'unknown',
      call.method,
      call.outcome,
      (performance.now() - call.started) / 1000,
    );
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
  // The span rides on the call (and RequestOptions.trace below it), not in an async context.
  if (tracer !== undefined) startRequestSpan(tracer, call, message);
  return serveMessage(call, message, got.text);
}

/**
 * A modern message, read: where it goes, whether policy lets it, then its answer; no extra turn when judge answers at
 * once.
 */
function serveMessage(call: McpCall, message: JsonRpcRequest, text: string): Response | Promise<Response> {
  const view = call.endpoint!.view;
  const here = view?.search ? searchStep(call, view, message) : undefined;
  if (here !== undefined)
    return here instanceof Promise
      ? here.then((answer) => answerHere(call, message, answer))
      : answerHere(call, message, here);
  // A Tasks method: its id opened first, then judged by the tool that created the task (src/tasks/).
  const unknownTask = TASK_METHODS.has(message.method) ? openTask(call, message) : undefined;
  if (unknownTask !== undefined) return refuse(call, message, unknownTask);
  route(call, message);
  const verdict = call.task === undefined ? judge(call, message) : judgeTask(call, message);
  return verdict instanceof Promise
    ? verdict.then((v) => decide(call, message, text, v))
    : decide(call, message, text, verdict);
}

function decide(call: McpCall, message: JsonRpcRequest, text: string, verdict: Verdict): Response | Promise<Response> {
  if (verdict.refusal) return refuse(call, message, { ...verdict, refusal: verdict.refusal });
  return execute(call, message, text, verdict);
}

/** What an exception in the edge answers, on either route: logged in full, a fixed message to the caller. */
function internalError(log: Log, c: NodeExchange | Context, error: unknown, path: string): Response {
  // A connect page's path holds its single-use link: never into the log.
  log.error({ err: error, path: withoutCapabilityLinks(path) }, 'unexpected error in the HTTP edge');
  return send(c, reject(500, null, ErrorCode.InternalError, 'Internal error in mcp-gateway; see the gateway log'));
}

/** What every request shares, built once: endpoints looked up per request, as a reload may change servers. */
function edgeContext(options: EdgeOptions): EdgeContext & ViewsOf {
  const endpoints = new Map<string, Endpoint>();
  const aggregate: Endpoint | undefined = options.aggregate && {
    upstream: options.aggregate,
    toolHeaders: new ToolHeaderIndex(),
  };
  const views = new Map<string, Endpoint>();
  const catalog = options.catalog;
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
    load: new CallerLoad(options.callerLimits),
    tasks: options.tasks,
    endpointOf(name) {
      const upstream = options.upstreams.get(name);
      if (!upstream) return undefined;
      let endpoint = endpoints.get(name);
      if (endpoint?.upstream !== upstream)
        endpoints.set(name, (endpoint = { upstream, toolHeaders: new ToolHeaderIndex() }));
      return endpoint;
    },
    viewOf(name) {
      const view = !aggregate
        ? undefined
        : name === ''
          ? catalog
            ? catalog.searchMode()
            : SEARCH_PROFILE
          : catalog?.profile(name);
      if (!aggregate || !view) return undefined;
      let endpoint = views.get(name);
      // A reload that changes the profile gives it a new endpoint (and what its lists taught of tool headers starts
      // afresh).
      if (endpoint?.view !== view)
        views.set(name, (endpoint = { upstream: aggregate.upstream, toolHeaders: new ToolHeaderIndex(), view }));
      return endpoint;
    },
    search: aggregate ? catalog : undefined,
    paths: () => [
      ...(aggregate ? ['/mcp'] : []),
      ...[...options.upstreams.keys()].map((n) => `/servers/${n}/mcp`),
      ...(aggregate && (!catalog || catalog.searchMode()) ? ['/search/mcp'] : []),
      ...(aggregate ? (catalog?.profileNames() ?? []).map((n) => `/profiles/${n}/mcp`) : []),
    ],
  };
}
