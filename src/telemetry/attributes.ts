// The OpenTelemetry semantic conventions for MCP and JSON-RPC, as attributes of one request or call.
// No SDK here: the edge uses these while the span is started, and they cost nothing when tracing is off.
import { textOf } from '../../protocol/exact-json.js';
import { isObject, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { META } from '../../protocol/mcp.js';
import type { TraceAttributes } from '../../protocol/request-trace.js';

/** `{mcp.method.name} {target}` where the request names one (a tool, a prompt), else the method alone. */
export function spanName(message: JsonRpcRequest): string {
  const target = targetName(message);
  if (target === undefined) return message.method;
  // A span's name has no length limit in the SDK: a name not checked yet (a 2025 client's) is cut here.
  return `${message.method} ${target.length <= MAX_NAME_IN_SPAN ? target : target.slice(0, MAX_NAME_IN_SPAN)}`;
}

/** Tool and prompt names are at most 128 characters (src/edge/name-bounds.ts checks it after the span starts). */
const MAX_NAME_IN_SPAN = 128;

export function callAttributes(message: JsonRpcRequest): TraceAttributes {
  const params = message.params;
  const attributes: TraceAttributes = { 'mcp.method.name': message.method, 'jsonrpc.request.id': textOf(message.id) };
  const version = isObject(params?._meta) ? params._meta[META.protocolVersion] : undefined;
  if (typeof version === 'string') attributes['mcp.protocol.version'] = version;
  const target = targetName(message);
  if (message.method === 'tools/call' && target !== undefined) {
    attributes['gen_ai.tool.name'] = target;
    attributes['gen_ai.operation.name'] = 'execute_tool';
  } else if (message.method === 'prompts/get' && target !== undefined) attributes['gen_ai.prompt.name'] = target;
  if (typeof params?.uri === 'string') attributes['mcp.resource.uri'] = params.uri;
  return attributes;
}

function targetName(message: JsonRpcRequest): string | undefined {
  const name = message.params?.name;
  return (message.method === 'tools/call' || message.method === 'prompts/get') && typeof name === 'string'
    ? name
    : undefined;
}
