// The execute step of a modern request policy let through: a listen stream stays open here; a retry whose
// call another replica holds goes there; anything else goes where the route says (McpCall.request: the
// cache, MRTR and the upstream sit behind it) and is answered as JSON or SSE (respond.ts), shaped for the
// caller (McpCall.shape). The audit line is written once the answer is.
import { RESPONSE_ALREADY_SENT } from './answered.js';
import type { Verdict } from '../../policy/guard.js';
import { isObject, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { META } from '../../protocol/mcp.js';
import { argsOf, record } from './audit-step.js';
import { listenAccess, type McpCall } from './call.js';
import { refuse } from './exchange.js';
import { refuse as refuseVerdict } from './judge.js';
import { FORWARDED_HEADER, forwardRequest, requestPath } from './forward.js';
import type { RetryRouting } from './retry-routing.js';
import { respondJson, respondSse, type CallOptions } from './respond.js';
import { traceIdOf } from './trace-id.js';
import { declaresTasks, followTasks, isTaskListen, refuseUndeclared } from '../tasks/index.js';

export async function execute(
  call: McpCall,
  message: JsonRpcRequest,
  text: string,
  verdict: Verdict,
): Promise<Response> {
  const { outgoing } = call.exchange;
  const args = argsOf(message);
  const meta = message.params?._meta;
  // The trace this request belongs to: its span's when traced, else the one the caller named in _meta.
  const traceId = call.span?.traceId ?? traceIdOf(meta);
  const cors = call.cors;
  if (cors) for (const [key, value] of Object.entries(cors)) outgoing.setHeader(key, value);
  if (message.method === 'subscriptions/listen') {
    const taskListen = isTaskListen(message);
    if (taskListen && !declaresTasks(message)) return refuseVerdict(call, message, refuseUndeclared(message));
    const load = call.edge.load;
    if (load !== undefined && !load.openStream(call.callerContext, outgoing)) {
      record(
        call,
        call.principal,
        message.method,
        { allowed: false, rule: 'open streams per principal' },
        undefined,
        traceId,
      );
      call.outcome = 'rate_limited';
      return refuse(call.exchange, load.streamRefusal(call.principal.id));
    }
    // Task ids named in the listen: the caller's own, followed at their servers (src/tasks/task-listen.ts).
    const tasks = taskListen ? followTasks(call, message) : undefined;
    record(call, call.principal, message.method, verdict, undefined, traceId);
    call.outcome = 'ok';
    const honouredElsewhere = tasks && { taskIds: tasks.taskIds };
    call.edge.listen.open(message, outgoing, call.server, listenAccess(call), {
      principal: call.principal.id,
      honouredElsewhere,
    });
    tasks?.start(outgoing);
    return RESPONSE_ALREADY_SENT;
  }
  // Most requests carry no requestState: they take no extra turn here.
  const forwarded = forwardRetry(call, message, text);
  const holder = forwarded && (await forwarded);
  if (holder !== undefined) {
    call.outcome = 'ok';
    record(
      call,
      call.principal,
      message.method,
      { ...verdict, rule: `${verdict.rule}; retry forwarded to instance ${holder}` },
      args,
      traceId,
    );
    return RESPONSE_ALREADY_SENT;
  }
  const options: CallOptions = {
    forwardHeaders: call.paramHeaders(message),
    authContext: call.callerContext,
    caller: call.caller,
    reach: call.grant,
    traceId,
    signal: undefined, // respond sets it: the object keeps one shape
  };
  // Not shaped means the client went away before the answer.
  call.outcome = 'cancelled';
  // Progress and log messages travel on the request's own stream, so those requests are answered with one.
  if (isObject(meta) && (meta.progressToken !== undefined || meta[META.logLevel] !== undefined))
    await respondSse(call, message, outgoing, options);
  else await respondJson(call, message, outgoing, options);
  record(call, call.principal, message.method, verdict, args, traceId);
  return RESPONSE_ALREADY_SENT;
}

/**
 * Sends a retry to the replica holding its call: the holder's id when it answered, else undefined; nothing
 * (no promise) when the request is no retry of a call another replica holds.
 */
function forwardRetry(call: McpCall, message: JsonRpcRequest, text: string): Promise<string | undefined> | undefined {
  const retries = call.edge.retries;
  const requestState = message.params?.requestState;
  // A forwarded request is never forwarded again.
  if (typeof requestState !== 'string' || !retries || call.exchange.incoming.headers[FORWARDED_HEADER] !== undefined)
    return undefined;
  const holder = retries.holderOf(requestState);
  return holder === undefined ? undefined : sendToHolder(call, retries, holder, message, text);
}

async function sendToHolder(
  call: McpCall,
  retries: RetryRouting,
  holder: string,
  message: JsonRpcRequest,
  text: string,
): Promise<string | undefined> {
  const { incoming, outgoing } = call.exchange;
  const base = await retries.lookup(holder);
  if (base === undefined) return undefined;
  const vouch = retries.trust.vouch(call.principal, call.callerContext, requestPath(incoming), text);
  // Traced: a client span for the hop, whose context the holder's server span takes as its parent.
  const trace = call.span?.forward(holder, base, message);
  return (await forwardRequest(base, incoming, text, outgoing, retries.instance, vouch, trace)) ? holder : undefined;
}
