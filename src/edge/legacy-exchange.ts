// A 2025 client's request at the edge: the legacy adapter (src/legacy-client/) translates in and out, and
// each modern request it makes runs the same core as a modern client's — route, judge, McpCall.request,
// McpCall.view — with its audit line written before the call, as a session's answer may take many rounds.
import { RESPONSE_ALREADY_SENT } from './answered.js';
import type { CancelSignal } from '../protocol/cancel.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { LegacyExchange } from '../legacy-client/legacy-clients.js';
import { argsOf, record } from './audit.js';
import { listenAccess, type McpCall } from './call.js';
import { judge } from './judge.js';
import { ClientGone, forwardedParamHeaders } from './node-io.js';
import { route } from './route.js';

/** A 2025 POST (initialize, or a request on a session). */
export async function serveLegacyPost(call: McpCall, body: unknown, sessionHeader: string | undefined): Promise<Response> {
  call.outcome = 'ok';
  await call.edge.legacyClients!.post(legacyExchange(call, body, sessionHeader));
  return RESPONSE_ALREADY_SENT;
}

/** A 2025 session's GET stream, or its end (DELETE). */
export async function serveLegacySession(call: McpCall, verb: 'GET' | 'DELETE'): Promise<Response> {
  const legacy = call.edge.legacyClients!;
  const exchange = legacyExchange(call, undefined, call.exchange.incoming.headers['mcp-session-id'] as string | undefined);
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
    endpoint: call.server ?? 'mcp',
    upstream: call.server,
    caller: call.callerContext,
    outgoing,
    signal: new ClientGone(outgoing),
    headers: call.cors ?? {},
    access: listenAccess(call.grant),
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
  route(call, request);
  const verdict = await judge(call, request);
  record(call, call.principal, request.method, verdict, argsOf(request));
  if (verdict.refusal) return verdict.refusal;
  const response = await call.request(request, {
    forwardHeaders: request.method === 'tools/call' ? forwardedParamHeaders(call.exchange.incoming.headers) : undefined,
    authContext: call.callerContext,
    reach: call.grant,
    signal: options.signal,
    onNotification: options.onNotification,
  });
  return call.view(request.method, response);
}
