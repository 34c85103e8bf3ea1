// Search mode's own tools at the edge (a profile with `search: true`, and /search/mcp). `search_tools` is
// answered here from the tool index, filtered for this caller by the profile and the guard (one index for
// everyone, never one per principal); `call_tool` is turned into the tools/call it stands for — its name,
// its arguments, and the request's _meta, requestState and inputResponses — which then goes through
// route → judge → execute like any call, so policy, conditions, pins, limits, audit and MRTR are the same.
import { RESPONSE_ALREADY_SENT } from './answered.js';
import type { Verdict } from '../../policy/guard.js';
import type { Profile } from '../profiles/index.js';
import { httpStatusOf } from '../../protocol/error-status.js';
import {
  isObject,
  responsePieces,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import {
  CALL_TOOL,
  DEFAULT_LIMIT,
  definitionOf,
  MAX_LIMIT,
  SEARCH_TOOLS,
  searchResult,
  toolError,
} from '../search/index.js';
import { argsOf, record } from './audit-step.js';
import type { McpCall } from './call.js';
import { nameTooLong, quoted } from './name-bounds.js';
import { writeJsonBody } from './node-io.js';
import { traceIdOf } from './trace-id.js';

const ANSWERED_HERE: Verdict = { allowed: true, rule: 'search mode: answered by the gateway' };

/**
 * On a search-mode endpoint: the answer to a search_tools call, or undefined after turning a call_tool
 * into its tools/call in place (an answer when its arguments are malformed). Undefined for anything else.
 */
export function searchStep(
  call: McpCall,
  profile: Profile,
  message: JsonRpcRequest,
): JsonRpcResponse | Promise<JsonRpcResponse> | undefined {
  if (message.method !== 'tools/call' || !profile.search) return undefined;
  const params = message.params ?? {};
  if (params.name === SEARCH_TOOLS) {
    const answer = (): JsonRpcResponse => ({
      jsonrpc: '2.0',
      id: message.id,
      result: search(call, profile, params.arguments),
    });
    const warming = call.edge.search?.warm();
    return warming === undefined ? answer() : warming.then(answer);
  }
  if (params.name !== CALL_TOOL) return undefined;
  const args = isObject(params.arguments) ? params.arguments : {};
  if (typeof args.name !== 'string' || args.name === '')
    return {
      jsonrpc: '2.0',
      id: message.id,
      result: toolError('call_tool needs name: the name of a tool exactly as search_tools returned it'),
    };
  // Bounded here as a direct call's name is by the request rules, before the name is routed, globbed or judged.
  const tooLong = nameTooLong('tool', args.name);
  if (tooLong !== undefined)
    return {
      jsonrpc: '2.0',
      id: message.id,
      result: toolError(`${tooLong}; give call_tool a name exactly as search_tools returned it`),
    };
  if (args.arguments !== undefined && !isObject(args.arguments)) {
    return {
      jsonrpc: '2.0',
      id: message.id,
      result: toolError(`call_tool's arguments must be an object matching the inputSchema of ${quoted(args.name)}`),
    };
  }
  const inner: JsonObject = { name: args.name };
  if (args.arguments !== undefined) inner.arguments = args.arguments;
  for (const key of ['_meta', 'requestState', 'inputResponses'] as const)
    if (params[key] !== undefined) inner[key] = params[key];
  message.params = inner;
  // Its client knew only call_tool's schema, which mirrors nothing into headers: the gateway sends the tool's.
  call.onBehalf = true;
  return undefined;
}

/** A search_tools answer, written as JSON and audited like any request. */
export function answerHere(call: McpCall, message: JsonRpcRequest, response: JsonRpcResponse): Response {
  if (call.exchange.outgoing.destroyed) return RESPONSE_ALREADY_SENT; // the client went away while the index filled
  const shaped = call.shape(response);
  record(
    call,
    call.principal,
    message.method,
    answeredHere(message),
    argsOf(message),
    call.span?.traceId ?? traceIdOf(message.params?._meta),
  );
  writeJsonBody(call.exchange.outgoing, httpStatusOf(shaped), responsePieces(shaped), call.cors);
  return RESPONSE_ALREADY_SENT;
}

/** The audit line of a search_tools call answered for a 2025 client's session. */
export function recordAnsweredHere(call: McpCall, message: JsonRpcRequest): void {
  record(call, call.principal, message.method, answeredHere(message), argsOf(message));
}

function answeredHere(message: JsonRpcRequest): Verdict {
  return { ...ANSWERED_HERE, target: String(message.params?.name) };
}

function search(call: McpCall, profile: Profile, args: unknown): JsonObject {
  const given = isObject(args) ? args : {};
  const query = given.query;
  if (typeof query !== 'string' || query.trim() === '')
    return toolError('search_tools needs query: a few words saying what the tool should do, for example "read a file"');
  const limit = given.limit ?? DEFAULT_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    return toolError(`limit must be a whole number from 1 to ${MAX_LIMIT}`);
  const index = call.edge.search?.index;
  if (index === undefined) return searchResult([]);
  const { guard } = call.security;
  const grant = call.grant;
  // What this caller may use here: shown by the profile, and seen through the guard as tools/list would show it.
  const allowed = (name: string): boolean => {
    if (profile.outbound('tools', name) === undefined) return false;
    if (!guard || !grant) return true;
    const tool = index.get(name);
    return tool !== undefined && guard.seesTool(tool, grant);
  };
  const tools: JsonObject[] = [];
  for (const hit of index.search(query, { limit, allowed })) {
    const shown = profile.shapeItem('tools/list', hit.tool);
    if (shown !== undefined) tools.push(definitionOf(shown));
  }
  return searchResult(tools);
}
