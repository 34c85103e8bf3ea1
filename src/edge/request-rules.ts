// The modern (2026-07-28) rules a POST must pass before anything reaches an upstream: the JSON-RPC
// envelope, the per-request _meta, and the headers that mirror the body. Pure: no I/O, no state.
import { isJsonInteger } from '../../protocol/exact-json.js';
import {
  ErrorCode,
  isObject,
  isValidId,
  parseMessage,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '../../protocol/jsonrpc.js';
import {
  CORE_REMOVED_METHODS,
  extensionOf,
  META,
  TASKS_EXTENSION,
  MODERN_REQUEST_METHODS,
  NAME_PARAM,
  SUPPORTED_VERSIONS,
} from '../../protocol/mcp.js';
import { decodeHeaderValue } from './header-value.js';
import { MAX_NAME_LENGTH, nameProblem, quoted } from './name-bounds.js';
import type { ToolHeaderIndex } from './param-headers.js';
import { reject, type Rejection } from './rejection.js';

/** The request's headers, as the Fetch API gives them (names are case-insensitive). */
export interface HeaderSource {
  get(name: string): string | null;
}
type Header = (lowerCaseName: string) => string | undefined;

export type Checked =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'rejected'; rejection: Rejection };

/**
 * `relays`: the endpoint is one server's (/servers/<name>/mcp), which relays a method the gateway has no
 * rule for to the server; elsewhere (/mcp and its views) such a method is refused here.
 */
export function checkMessage(
  body: unknown,
  headers: HeaderSource,
  tools: ToolHeaderIndex | undefined,
  relays = false,
): Checked {
  const header: Header = (name) => headers.get(name) ?? undefined;
  const envelope = checkEnvelope(body);
  if ('rejection' in envelope) return { kind: 'rejected', rejection: envelope.rejection };
  if (envelope.kind === 'notification') return envelope;
  const rejection = checkRequest(envelope.message, header, tools, relays);
  return rejection ? { kind: 'rejected', rejection } : envelope;
}

function checkEnvelope(body: unknown): Exclude<Checked, { kind: 'rejected' }> | { rejection: Rejection } {
  if (Array.isArray(body)) {
    return {
      rejection: reject(
        400,
        null,
        ErrorCode.InvalidRequest,
        'Batches are not supported: send one JSON-RPC message per POST',
      ),
    };
  }
  if (!isObject(body))
    return { rejection: reject(400, null, ErrorCode.InvalidRequest, 'The body must be a JSON-RPC request object') };
  const id = validIdOrNull(body.id);
  if (body.jsonrpc !== '2.0') return { rejection: reject(400, id, ErrorCode.InvalidRequest, 'jsonrpc must be "2.0"') };
  if (typeof body.method !== 'string') {
    const what =
      'result' in body || 'error' in body
        ? 'Clients must not send JSON-RPC responses to an MCP server'
        : 'method must be a string';
    return { rejection: reject(400, id, ErrorCode.InvalidRequest, what) };
  }
  if (body.params !== undefined && !isObject(body.params)) {
    return { rejection: reject(400, id, ErrorCode.InvalidRequest, 'params must be an object') };
  }
  const parsed = parseMessage(body);
  if (parsed.kind === 'notification' || parsed.kind === 'request') return parsed;
  return {
    rejection: reject(400, null, ErrorCode.InvalidRequest, 'id must be a string or an integer (null is not allowed)'),
  };
}

function checkRequest(
  message: JsonRpcRequest,
  header: Header,
  tools: ToolHeaderIndex | undefined,
  relays: boolean,
): Rejection | undefined {
  const { id, method } = message;
  const params = message.params;
  const meta = params?._meta;
  const version = isObject(meta) ? meta[META.protocolVersion] : undefined;

  if (version === undefined) {
    if (method === 'initialize') {
      const requested =
        isObject(params) && typeof params.protocolVersion === 'string' ? params.protocolVersion : 'unknown';
      return reject(
        400,
        id,
        ErrorCode.UnsupportedProtocolVersion,
        `This endpoint speaks MCP ${SUPPORTED_VERSIONS.join(', ')} only (stateless, no initialize); 2025-era ` +
          `clients are not supported yet`,
        { supported: SUPPORTED_VERSIONS, requested },
      );
    }
    return reject(
      400,
      id,
      ErrorCode.InvalidParams,
      `params._meta["${META.protocolVersion}"] is required on every request (MCP 2026-07-28)`,
    );
  }
  if (!isObject((meta as Record<string, unknown>)[META.clientCapabilities])) {
    return reject(
      400,
      id,
      ErrorCode.InvalidParams,
      `params._meta["${META.clientCapabilities}"] is required on every request and must be an object ({} for none)`,
    );
  }

  const token = (meta as Record<string, unknown>).progressToken;
  if (token !== undefined && typeof token !== 'string' && !isJsonInteger(token)) {
    return reject(400, id, ErrorCode.InvalidParams, 'params._meta.progressToken must be a string or an integer');
  }

  // The spec's order: headers that disagree with the body first (-32020, even when the body names a version
  // nobody supports), then the version (-32022), then headers that are missing (-32020). One rule for every
  // version value: one that is not a string is compared, and reported, as its JSON text, so it is refused
  // like any other version nobody supports, at the same step.
  const bodyVersion = typeof version === 'string' ? version : JSON.stringify(version);
  const headerVersion = header('mcp-protocol-version');
  const headerMethod = header('mcp-method');
  if (headerVersion !== undefined && headerVersion !== bodyVersion)
    return mismatch(id, 'MCP-Protocol-Version', headerVersion, version);
  if (headerMethod !== undefined && headerMethod !== method) return mismatch(id, 'Mcp-Method', headerMethod, method);
  if (!SUPPORTED_VERSIONS.includes(bodyVersion)) return unsupported(id, bodyVersion);
  if (headerVersion === undefined) return mismatch(id, 'MCP-Protocol-Version', headerVersion, version);
  if (headerMethod === undefined) return mismatch(id, 'Mcp-Method', headerMethod, method);

  if (!MODERN_REQUEST_METHODS.has(method)) {
    const refusal = unknownMethod(id, method, relays);
    if (refusal) return refusal;
  }

  // Before anything reads or compares a name: its length (name-bounds.ts).
  const tooLong = nameProblem(method, params);
  if (tooLong !== undefined) return reject(400, id, ErrorCode.InvalidParams, `${tooLong}; shorten it`);

  const nameParam = NAME_PARAM[method];
  if (nameParam) {
    const bodyName = params![nameParam];
    const raw = header('mcp-name');
    const decoded = raw === undefined ? undefined : decodeHeaderValue(raw);
    if (raw !== undefined && decoded === undefined) return invalidHeader(id, 'Mcp-Name');
    if (decoded !== bodyName) return mismatch(id, 'Mcp-Name', decoded, bodyName);
  }
  if (method === 'tools/call') return checkParamHeaders(id, params!, header, tools);
  return undefined;
}

function checkParamHeaders(
  id: JsonRpcId,
  params: Record<string, unknown>,
  header: Header,
  tools: ToolHeaderIndex | undefined,
): Rejection | undefined {
  if (!tools || typeof params.name !== 'string') return undefined;
  const problem = tools.check(params.name, params.arguments, header);
  if (problem) return reject(400, id, ErrorCode.HeaderMismatch, `Header mismatch: ${problem}`);
  return undefined;
}

/**
 * A method outside the core's request methods. One server's endpoint relays it (the server answers, -32601
 * included), unless the core removed it and no extension took the name up (whether the server advertises
 * that extension is the read step's question: extension-methods.ts). /mcp and its views serve only what
 * they merge or route, so there it is refused, saying where a server's own methods are reached. The Tasks
 * extension's methods are routed everywhere, by the gateway's own task ids (src/tasks/).
 */
function unknownMethod(id: JsonRpcId, method: string, relays: boolean): Rejection | undefined {
  const removed = CORE_REMOVED_METHODS.has(method);
  if (!relays && extensionOf(method) === TASKS_EXTENSION) return undefined;
  if (relays && (!removed || extensionOf(method) !== undefined)) return undefined;
  if (removed) return reject(404, id, ErrorCode.MethodNotFound, `${method} was removed in MCP 2026-07-28`);
  if (relays) return undefined;
  return reject(
    404,
    id,
    ErrorCode.MethodNotFound,
    `Method not found: ${method}. This endpoint serves the methods it merges or routes across servers; a server's ` +
      `own methods are reached on /servers/<name>/mcp`,
  );
}

function unsupported(id: JsonRpcId, requested: string): Rejection {
  return reject(400, id, ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version ${quoted(requested)}`, {
    supported: SUPPORTED_VERSIONS,
    requested: requested.length <= MAX_NAME_LENGTH ? requested : quoted(requested),
  });
}

function mismatch(id: JsonRpcId, name: string, headerValue: unknown, bodyValue: unknown): Rejection {
  const message =
    headerValue === undefined
      ? `Header mismatch: the ${name} header is required and must equal the body's value ${quotedValue(bodyValue)}`
      : `Header mismatch: ${name} header value ${quotedValue(headerValue)} does not match body value ` +
        `${quotedValue(bodyValue)}`;
  return reject(400, id, ErrorCode.HeaderMismatch, message);
}

/** A value as a refusal quotes it: short ones as JSON, as before; anything long cut to a prefix. */
function quotedValue(value: unknown): string {
  if (typeof value === 'string') return quoted(value);
  const text = JSON.stringify(value);
  return text === undefined || text.length <= MAX_NAME_LENGTH ? String(text) : quoted(value);
}

function invalidHeader(id: JsonRpcId, name: string): Rejection {
  return reject(
    400,
    id,
    ErrorCode.HeaderMismatch,
    `Header ${name} has characters a header cannot carry; send non-ASCII values as =?base64?<UTF-8 Base64>?=`,
  );
}

function validIdOrNull(id: unknown): JsonRpcId | null {
  return isValidId(id) ? id : null;
}
