// Everything that makes a 2025-era (legacy) server look modern to the core: the initialize handshake,
// results completed with the fields the modern revision requires, error codes mapped, and a
// server/discover answer built from what the server said at initialize.
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import { LEGACY_CLIENT_REQUESTS, LEGACY_VERSIONS, META, MODERN_VERSION, type ServerInfo } from '../../protocol/mcp.js';
import { completeResult } from '../modern-result.js';
import type { ServerRequestHandler } from '../upstream.js';

export interface LegacyHandshake {
  protocolVersion: string;
  capabilities: JsonObject;
  serverInfo: ServerInfo;
  instructions: string | undefined;
}

export interface LegacyOptions {
  /** ttlMs given to cacheable results, which legacy servers never send. */
  ttlMs: number;
}

const MODERN_ONLY_META: string[] = [META.protocolVersion, META.clientCapabilities, META.clientInfo, META.logLevel];

export function initializeParams(clientInfo: ServerInfo): JsonObject {
  // The gateway can relay these within a call (as MRTR input requests), when the calling client declares them.
  return {
    protocolVersion: LEGACY_VERSIONS[0],
    capabilities: { roots: {}, sampling: {}, elicitation: {} },
    clientInfo,
  };
}

/** Reads an initialize result; throws with a message naming what is wrong. */
export function parseInitializeResult(result: unknown): LegacyHandshake {
  if (!isObject(result)) throw new Error('initialize answered without a result object');
  const version = result.protocolVersion;
  if (typeof version !== 'string' || !LEGACY_VERSIONS.includes(version)) {
    throw new Error(
      `initialize answered protocolVersion ${JSON.stringify(version)}; mcp-gateway speaks ` +
        `${LEGACY_VERSIONS.join(', ')} to legacy servers`,
    );
  }
  const info = isObject(result.serverInfo) ? result.serverInfo : {};
  return {
    protocolVersion: version,
    capabilities: isObject(result.capabilities) ? result.capabilities : {},
    serverInfo: { ...info, name: String(info.name ?? 'unknown'), version: String(info.version ?? '0') },
    instructions: typeof result.instructions === 'string' ? result.instructions : undefined,
  };
}

/** Removes the modern per-request _meta keys a legacy server has no use for; keeps everything else. */
export function toLegacyParams(params: JsonObject | undefined): void {
  const meta = params?._meta;
  if (!isObject(meta)) return;
  for (const key of MODERN_ONLY_META) delete meta[key];
  if (Object.keys(meta).length === 0) delete params!._meta;
}

/**
 * The request as a legacy server should see it: the modern per-request _meta keys left out. The caller's
 * message is not touched (only its params and _meta are copied, and only when there is something to drop).
 */
export function toLegacyRequest(message: JsonRpcRequest): JsonRpcRequest {
  const meta = message.params?._meta;
  if (!isObject(meta) || !MODERN_ONLY_META.some((key) => key in meta)) return message;
  const kept: JsonObject = {};
  for (const key in meta) if (!MODERN_ONLY_META.includes(key)) kept[key] = meta[key];
  const params: JsonObject = { ...message.params };
  if (Object.keys(kept).length) params._meta = kept;
  else delete params._meta;
  return { ...message, params };
}

/** Completes a legacy response in place: only fields the server did not send are added. */
export function toModernResponse(
  method: string,
  response: JsonRpcResponse,
  handshake: LegacyHandshake,
  options: LegacyOptions,
): void {
  if ('error' in response) {
    if (!isObject(response.error)) return; // malformed; passed on as it came
    if (response.error.code === ErrorCode.LegacyResourceNotFound) response.error.code = ErrorCode.InvalidParams;
    return;
  }
  const result = response.result;
  if (!isObject(result)) return;
  completeResult(method, result, options); // the same rules as a modern server's results (modern-result.ts)
  const meta = isObject(result._meta) ? result._meta : (result._meta = {});
  meta[META.serverInfo] ??= handshake.serverInfo;
}

/** 2025 capabilities whose methods no longer exist downstream (tasks moved to an extension). */
const LEGACY_ONLY_CAPABILITIES = new Set(['tasks']);

export function discoverResult(handshake: LegacyHandshake, options: LegacyOptions): JsonObject {
  const capabilities: JsonObject = {};
  for (const [key, value] of Object.entries(handshake.capabilities)) {
    if (!LEGACY_ONLY_CAPABILITIES.has(key)) capabilities[key] = value;
  }
  const result: JsonObject = {
    resultType: 'complete',
    supportedVersions: [MODERN_VERSION],
    capabilities,
    ttlMs: options.ttlMs,
    cacheScope: 'private',
    _meta: { [META.serverInfo]: handshake.serverInfo },
  };
  if (handshake.instructions !== undefined) result.instructions = handshake.instructions;
  return result;
}

/**
 * The answer to a request a server sends the gateway in the middle of a call: ping is answered; sampling,
 * elicitation and roots cannot reach a stateless client yet, so they are refused with a reason.
 */
export function answerServerRequest(request: JsonRpcRequest): JsonRpcResponse {
  if (request.method === 'ping') return { jsonrpc: '2.0', id: request.id, result: {} };
  const message = LEGACY_CLIENT_REQUESTS.has(request.method)
    ? `mcp-gateway does not relay ${request.method} here: only within a tools/call, prompts/get or resources/read, ` +
      `to the client that made it`
    : `Method not found: ${request.method}`;
  return errorResponse(request.id, ErrorCode.MethodNotFound, message);
}

/** Asks the caller's handler and words its answer as the JSON-RPC response the server waits for. */
export async function relayServerRequest(
  handler: ServerRequestHandler,
  request: JsonRpcRequest,
): Promise<JsonRpcResponse> {
  try {
    const answer = await handler({ method: request.method, params: request.params });
    return 'result' in answer
      ? { jsonrpc: '2.0', id: request.id, result: answer.result }
      : { jsonrpc: '2.0', id: request.id, error: answer.error };
  } catch (error) {
    return errorResponse(
      request.id,
      ErrorCode.InternalError,
      `mcp-gateway could not relay ${request.method}: ${(error as Error).message}`,
    );
  }
}
