// The read step: the POST as a message — transport rules (content type, accept), the body within its size,
// a forwarded body checked against its vouch, JSON within its depth, then the era: a 2025 client's message
// goes to the legacy adapter; a modern one must pass the envelope and _meta rules (request-rules.ts).
// Answers and returns the Response itself when the message stops here (a refusal, a notification).
import { RESPONSE_ALREADY_SENT } from './answered.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { parseJson } from '../../protocol/exact-json.js';
import { ErrorCode, isObject } from '../../protocol/jsonrpc.js';
import { digest } from '../mrtr/index.js';
import type { McpCall } from './call.js';
import { send } from './exchange.js';
import {
  checkAccept,
  checkContentType,
  MAX_JSON_DEPTH,
  nestsDeeperThan,
  tooLarge,
  tooLargeHeaders,
} from './http-rules.js';
import { NodeHeaders, readBody } from './node-io.js';
import { reject } from './rejection.js';
import { checkMessage } from './request-rules.js';
import { checkTakenUp } from './extension-methods.js';

/**
 * What was read: a modern request (with its body's text, which a forwarded retry sends on), or a 2025 client's body.
 */
export type Read =
  | { kind: 'request'; message: JsonRpcRequest; text: string }
  | { kind: 'legacy'; body: unknown; sessionHeader: string | undefined };

export async function read(call: McpCall): Promise<Read | Response> {
  const { exchange, cors } = call;
  const incoming = exchange.incoming;
  const headers = new NodeHeaders(incoming.headers);
  const transportProblem = checkContentType(headers.get('content-type')) ?? checkAccept(headers.get('accept'));
  if (transportProblem) return send(exchange, transportProblem, cors);
  const maxBodyBytes = call.edge.maxBodyBytes;
  const text = await readBody(incoming, maxBodyBytes);
  if (text === null) return RESPONSE_ALREADY_SENT; // the client went away mid-body: nobody to answer
  if (text === undefined)
    return send(exchange, tooLarge(maxBodyBytes), { ...cors, ...tooLargeHeaders(incoming.headers['content-length']) });
  if (call.vouched && digest(text) !== call.vouched.bodyDigest)
    return send(
      exchange,
      reject(403, null, ErrorCode.InvalidRequest, 'This forwarded body is not the one its replica vouched for'),
      cors,
    );
  let body: unknown;
  try {
    body = parseJson(text);
  } catch {
    return send(exchange, reject(400, null, ErrorCode.ParseError, 'Parse error: the body is not valid JSON'), cors);
  }
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    return send(
      exchange,
      reject(
        400,
        null,
        ErrorCode.InvalidRequest,
        `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep; flatten it`,
      ),
      cors,
    );
  }
  // The body decides the era: modern _meta wins; initialize, or a request on a session, is a 2025 client's.
  const sessionHeader = headers.get('mcp-session-id') ?? undefined;
  if (call.edge.legacyClients?.claims(body, sessionHeader)) {
    call.method = isObject(body) && typeof body.method === 'string' ? body.method : undefined;
    return { kind: 'legacy', body, sessionHeader };
  }
  const checked = checkMessage(body, headers, call.endpoint!.toolHeaders, call.server !== undefined);
  if (checked.kind === 'rejected') return send(exchange, checked.rejection, cors);
  const notTakenUp = checked.kind === 'request' ? checkTakenUp(call, checked.message) : undefined;
  const refusal = notTakenUp && (await notTakenUp);
  if (refusal) return send(exchange, refusal, cors);
  if (checked.kind === 'notification') {
    call.outcome = 'ok';
    // Over HTTP a client cancels by closing its stream; no client notification needs forwarding.
    call.edge.log.debug({ endpoint: call.name, method: checked.message.method }, 'notification accepted');
    exchange.outgoing.writeHead(202, cors);
    exchange.outgoing.end();
    return RESPONSE_ALREADY_SENT;
  }
  call.method = checked.message.method;
  return { kind: 'request', message: checked.message, text };
}
