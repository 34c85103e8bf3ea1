// A 2025 client's request at the edge: the legacy adapter (src/legacy-client/) translates in and out, and
// each modern request it makes runs the same core as a modern client's — route, judge, McpCall.request,
// McpCall.view — with its audit line written before the call, as a session's answer may take many rounds.
import { RESPONSE_ALREADY_SENT } from './answered.js';
import type { CancelSignal } from '../../protocol/cancel.js';
import {
  ErrorCode,
  errorResponse,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { LegacyExchange } from '../legacy-client/index.js';
import { argsOf, record } from './audit-step.js';
import { listenAccess, markAnswer, type McpCall } from './call.js';
import { refuse } from './exchange.js';
import { judge } from './judge.js';
import { nameProblem } from './name-bounds.js';
import { ClientGone } from './node-io.js';
import { route } from './route.js';
import { recordAnsweredHere, searchStep } from './search-step.js';
import { startLegacySpan } from './request-span.js';

/**
 * A 2025 POST (initialize, or a request on a session). Traced like a modern request: its span is named for
 * the 2025 message, and every modern request the adapter makes for it calls upstreams under that span.
 */
export async function serveLegacyPost(
  call: McpCall,
  body: unknown,
  sessionHeader: string | undefined,
): Promise<Response> {
  call.outcome = 'ok';
  const exchange = legacyExchange(call, body, sessionHeader);
  const tracer = call.edge.tracer;
  if (tracer !== undefined) startLegacySpan(tracer, call, body);
  await call.edge.legacyClients!.post(exchange);
  return RESPONSE_ALREADY_SENT;
}

/** A 2025 session's GET stream, or its end (DELETE). */
export async function serveLegacySession(call: McpCall, verb: 'GET' | 'DELETE'): Promise<Response> {
  const legacy = call.edge.legacyClients!;
  const exchange = legacyExchange(
    call,
    undefined,
    call.exchange.incoming.headers['mcp-session-id'] as string | undefined,
  );
  const load = call.edge.load;
  if (verb === 'GET' && load !== undefined && !load.openStream(call.callerContext, call.exchange.outgoing)) {
    call.outcome = 'rate_limited';
    return refuse(call.exchange, load.streamRefusal(call.principal.id), call.cors);
  }
  call.outcome = 'ok';
  if (verb === 'GET') legacy.stream(exchange);
  else await legacy.end(exchange);
  return RESPONSE_ALREADY_SENT;
}

function legacyExchange(call: McpCall, body: unknown, sessionHeader: string | undefined): LegacyExchange {
  const outgoing = call.exchange.outgoing;
  return {
    body,
    sessionHeader,
    endpoint: call.server ?? call.name, // 'mcp', or a view's own name: a session stays on its endpoint
    upstream: call.server,
    caller: call.callerContext,
    principal: call.principal.id,
    outgoing,
    signal: new ClientGone(outgoing),
    headers: call.cors ?? {},
    access: listenAccess(call),
    execute: (request, options) => executeModern(call, request, options),
  };
}

/**
 * One modern request through the core: placed, judged, sent where the route says, shown as the caller may
 * see it. The target lives on the call: the adapter runs one 2025 request's rounds one after another and
 * refuses batches, so no other round can place a target between this one's judge and request.
 */
async function executeModern(
  call: McpCall,
  request: JsonRpcRequest,
  options: { signal?: CancelSignal; onNotification?: (notification: JsonRpcNotification) => void },
): Promise<JsonRpcResponse> {
  const view = call.endpoint?.view;
  // A 2025 message meets no request rules of its own: its names are bounded here, before anything reads them.
  const tooLong = nameProblem(request.method, request.params, view?.search === true);
  if (tooLong !== undefined) {
    record(call, call.principal, request.method, {
      allowed: false,
      rule: 'a name or URI longer than mcp-gateway accepts',
    });
    return errorResponse(request.id, ErrorCode.InvalidParams, `${tooLong}; shorten it`);
  }
  const here = view?.search ? searchStep(call, view, request) : undefined;
  if (here !== undefined) {
    recordAnsweredHere(call, request);
    return call.view(request.method, await here);
  }
  route(call, request);
  const verdict = await judge(call, request);
  record(call, call.principal, request.method, verdict, argsOf(request));
  if (verdict.refusal) return verdict.refusal;
  const response = await call.request(request, {
    forwardHeaders: call.paramHeaders(request),
    authContext: call.callerContext,
    caller: call.caller,
    reach: call.grant,
    signal: options.signal,
    onNotification: options.onNotification,
  });
  // The caller's answer may be this one or built from it (initialize); an error here is the request's.
  if (call.span !== undefined) markAnswer(call, response);
  return call.view(request.method, response);
}
