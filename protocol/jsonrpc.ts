// JSON-RPC 2.0 shapes and error builders shared by every layer. Imports only exact-json.ts (numbers as written).
import { isJsonInteger, isRawNumber, numberOf, type RawJsonNumber } from './exact-json.js';

/** A number id a double cannot hold exactly is kept as written (exact-json.ts), and answered with as written. */
export type JsonRpcId = string | number | RawJsonNumber;
export type JsonObject = Record<string, unknown>;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: JsonObject;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: JsonObject;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: JsonObject;
}

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  /** Absent when the request's id could not be read (MCP's schema allows no null id). */
  id?: JsonRpcId;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
  /** Legacy (2025) "resource not found"; modern servers use InvalidParams. */
  LegacyResourceNotFound: -32002,
} as const;

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcFailure {
  const error: JsonRpcErrorObject = data === undefined ? { code, message } : { code, message, data };
  return id === null ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error };
}

/**
 * A JSON object: not an array, and not a number kept as written (exact-json.ts), which is an object to JavaScript only.
 */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isRawNumber(value);
}

/**
 * Whether an answer's id is the request's. A number kept as written is a new object at every parse, so it is
 * compared by value; as a double, so a server that read the id as JSON.parse does (12345678901234567000 for
 * 12345678901234567890) still answers the request it was sent, as it did before ids were kept.
 */
export function sameId(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const x = numberOf(a);
  return x !== undefined && x === numberOf(b);
}

export function isValidId(id: unknown): id is JsonRpcId {
  return typeof id === 'string' || isJsonInteger(id);
}

/** A parsed line or body, narrowed by what it is (the value itself, not a copy). */
export type ParsedMessage =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse }
  | { kind: 'invalid'; message: unknown };

/**
 * What a parsed JSON value is by its shape: a request (method and a string or integer id), a notification
 * (method, no id), a response (id and result or error) or invalid; `params`, when present, is an object.
 * The `jsonrpc` field is not checked: the edge insists on it for clients (with its own message), and what
 * upstreams write is read liberally.
 */
export function parseMessage(value: unknown): ParsedMessage {
  if (!isObject(value)) return { kind: 'invalid', message: value };
  if (typeof value.method === 'string') {
    if (value.params !== undefined && !isObject(value.params)) return { kind: 'invalid', message: value };
    if (!('id' in value)) return { kind: 'notification', message: value as JsonObject & JsonRpcNotification };
    return isValidId(value.id)
      ? { kind: 'request', message: value as JsonObject & JsonRpcRequest }
      : { kind: 'invalid', message: value };
  }
  if ('id' in value && ('result' in value || 'error' in value))
    return { kind: 'response', message: value as JsonObject & JsonRpcResponse };
  return { kind: 'invalid', message: value };
}

/**
 * parseMessage for what an upstream wrote. Some serialisers write `"params": null` or `[]` for "no params"
 * (Rust's json! with None, PHP's empty array): such a message counts as having none, as the gateway read
 * it before, rather than being dropped and leaving a call or a list change unheard. The edge stays strict
 * with clients (its envelope rules).
 */
export function parseUpstreamMessage(value: unknown): ParsedMessage {
  if (isObject(value) && value.params !== undefined && !isObject(value.params)) {
    const { params: _none, ...rest } = value;
    return parseMessage(rest);
  }
  return parseMessage(value);
}

/** Error codes only a 2026-era (modern) MCP peer answers with: what tells a server's era from its refusal. */
export const MODERN_ONLY_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.UnsupportedProtocolVersion,
  ErrorCode.HeaderMismatch,
  ErrorCode.MissingRequiredClientCapability,
]);

export function isModernError(error: unknown): boolean {
  if (!isObject(error) || typeof error.code !== 'number' || !MODERN_ONLY_ERRORS.has(error.code)) return false;
  // -32022 must say which versions the server does speak.
  return (
    error.code !== ErrorCode.UnsupportedProtocolVersion || (isObject(error.data) && Array.isArray(error.data.supported))
  );
}

/**
 * A success may carry its result already serialised as pieces (a cached answer served many times): UTF-8
 * bytes kept for every hit, and short strings (the ttlMs left) made per hit;
 * the edge then writes these bytes as they are, instead of stringifying `result` and encoding it again.
 * They must say the same as `result`.
 */
export const SERIALIZED_RESULT: unique symbol = Symbol('serializedResult');

export type PreSerialized = JsonRpcSuccess & { [SERIALIZED_RESULT]?: readonly (Buffer | string)[] };

/** The response as JSON text, using a pre-serialised result when there is one. */
export function serializeResponse(response: JsonRpcResponse): string {
  const serialized = (response as PreSerialized)[SERIALIZED_RESULT];
  if (serialized === undefined) return JSON.stringify(response);
  let result = '';
  for (const piece of serialized) result += typeof piece === 'string' ? piece : piece.toString('utf8');
  return `{"jsonrpc":"2.0","id":${JSON.stringify(response.id)},"result":${result}}`;
}

/** The response as UTF-8 pieces to write in order: a pre-serialised result is not copied. */
export function responseBytes(response: JsonRpcResponse): Buffer[] {
  return responsePieces(response).map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece));
}

/**
 * The same pieces as the edge writes them: the short ones around a pre-serialised result stay strings,
 * which the socket's writev copies in C++ (a Buffer made of each in JS cost more than the copy). A plain
 * answer (a tool call's) is one string: Node writes it in one piece with the status line and headers,
 * encoding it once on the way out, instead of a Buffer made of it first and written beside them.
 */
export function responsePieces(response: JsonRpcResponse): (Buffer | string)[] {
  const serialized = (response as PreSerialized)[SERIALIZED_RESULT];
  if (serialized === undefined) return [JSON.stringify(response)];
  const pieces: (Buffer | string)[] = [`{"jsonrpc":"2.0","id":${JSON.stringify(response.id)},"result":`];
  for (const piece of serialized) pieces.push(piece);
  const last = pieces[pieces.length - 1];
  // A result that ends in a string (its ttlMs) takes the closing brace with it: one piece less to write.
  if (typeof last === 'string') pieces[pieces.length - 1] = `${last}}`;
  else pieces.push('}');
  return pieces;
}
