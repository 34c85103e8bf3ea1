// The one place that words what can go wrong with a remote upstream, so every message names the
// server, where it lives, what happened and which setting to look at.
import { markChallenge } from '../../protocol/auth-challenge.js';
import { markFailure, type FailureMark } from '../../protocol/failure-mark.js';
import { ErrorCode, errorResponse, isObject, type JsonRpcFailure, type JsonRpcId } from '../../protocol/jsonrpc.js';
import type { ExchangeEnd, HttpExchange } from './http-exchange.js';

/** What the supervisor does about a failure: `auth` and `unreachable` keep the upstream from being ready. */
export type FailureKind = 'unreachable' | 'auth' | 'protocol';

export class UpstreamFailure extends Error {
  constructor(
    message: string,
    readonly kind: FailureKind,
  ) {
    super(message);
  }
}

export interface Where {
  name: string;
  /** The URL as shown in messages (no credentials, no query). */
  url: string;
  timeoutMs: number;
  maxBytes: number;
}

/** The URL without user info or query string, which may carry secrets. */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}${url.search ? '?…' : ''}`;
}

export function upstream(where: Where): string {
  return `Upstream '${where.name}' (${where.url})`;
}

export function timeoutMessage(where: Where, method: string): string {
  return (
    `Upstream '${where.name}' did not answer ${method} within ${where.timeoutMs} ms; the request was ` +
    `cancelled. Raise servers.${where.name}.timeoutMs if it needs longer.`
  );
}

export const CANCELLED_MESSAGE = 'Request cancelled: The client closed the request';

export function isAuthStatus(status: number): boolean {
  return status === 401 || status === 403;
}

/** A JSON-RPC error body (`{error: {code, message}}`), as 4xx/5xx answers often carry. */
export function isErrorBody(body: unknown): body is JsonRpcFailure {
  return (
    isObject(body) &&
    isObject(body.error) &&
    typeof body.error.code === 'number' &&
    typeof body.error.message === 'string'
  );
}

/** Why an exchange produced no usable JSON-RPC response, in one sentence. */
export function describeExchange(where: Where, method: string, exchange: HttpExchange): string {
  const who = upstream(where);
  switch (exchange.end) {
    case 'network':
      // Once the server has answered, a network error is a connection that broke mid-answer.
      if (exchange.status > 0)
        return (
          `${who} broke off its answer to ${method} (HTTP ${exchange.status}): ` +
          `${describeError(exchange.error)}. Send the request again.`
        );
      return (
        `${who} could not be reached for ${method}: ${describeError(exchange.error)}. Check that the server is ` +
        `running and servers.${where.name}.url is right.`
      );
    case 'timeout':
      return timeoutMessage(where, method);
    case 'cancelled':
      return CANCELLED_MESSAGE;
    case 'too-large':
      return `${who} answered ${method} with a message larger than ${where.maxBytes} bytes; mcp-gateway dropped it.`;
    case 'empty':
      return exchange.contentType.startsWith('text/event-stream')
        ? `${who} ended its event stream for ${method} without sending the response.`
        : `${who} answered ${method} with HTTP ${exchange.status} and no JSON-RPC response.`;
    case 'unreadable':
      return (
        `${who} answered ${method} with HTTP ${exchange.status} (${exchange.contentType || 'no content type'}) ` +
        `that is not a JSON-RPC response: ${snippet(exchange.body)}`
      );
    case 'status':
      if (isAuthStatus(exchange.status)) {
        const said = isErrorBody(exchange.body) ? ` ("${exchange.body.error.message}")` : '';
        return (
          `${who} refused ${method} with HTTP ${exchange.status}${said}: the gateway's credentials were not ` +
          `accepted. Check servers.${where.name}.headers (for example Authorization) and the secrets they name.`
        );
      }
      return (
        `${who} answered ${method} with HTTP ` +
        `${exchange.status}${exchange.body === undefined ? '' : `: ${snippet(exchange.body)}`}`
      );
    default:
      return `${who} gave no answer to ${method}.`;
  }
}

/** An error response for the caller, with the server and URL in `data` for machines. */
export function failureResponse(id: JsonRpcId, where: Where, message: string, status?: number): JsonRpcFailure {
  return errorResponse(
    id,
    ErrorCode.InternalError,
    message,
    status ? { server: where.name, url: where.url, httpStatus: status } : { server: where.name, url: where.url },
  );
}

/** The server's own JSON-RPC error sent with a non-2xx status (not an auth refusal), made the caller's answer. */
export function errorBodyOf(exchange: HttpExchange, callerId: JsonRpcId): JsonRpcFailure | undefined {
  if (exchange.end !== 'status' || !isErrorBody(exchange.body) || isAuthStatus(exchange.status)) return undefined;
  const failure = exchange.body;
  failure.jsonrpc = '2.0';
  failure.id = callerId;
  return failure;
}

/**
 * The caller's answer to an exchange that brought none it can use; `unreachable` hears of a server not reached at all.
 */
export function exchangeFailure(
  where: Where,
  method: string,
  callerId: JsonRpcId,
  exchange: HttpExchange,
  unreachable: (message: string) => void,
): JsonRpcFailure {
  const said = describeExchange(where, method, exchange);
  if (exchange.end === 'network' && isConnectFailure(exchange.error)) unreachable(said);
  const response = markChallenge(
    failureResponse(callerId, where, said, exchange.status || undefined),
    exchange.challenge,
  );
  const mark = exchange.end && FAILURE_MARKS[exchange.end];
  return mark ? markFailure(response, mark) : response;
}

/** What each way an exchange can end without a usable answer means to the metrics (cancelled: the caller's doing). */
const FAILURE_MARKS: Partial<Record<ExchangeEnd, FailureMark>> = {
  network: 'unreachable',
  timeout: 'timeout',
  'too-large': 'bad_answer',
  empty: 'bad_answer',
  unreadable: 'bad_answer',
  status: 'bad_answer',
};

/**
 * Seconds a server that answered 503 with Retry-After (delta-seconds, or an HTTP-date) asked to wait, at
 * least 1; undefined for any other answer. That pair is the server saying it is busy and when to come back,
 * which is what the gateway's own capacity refusal says, so it is passed on as one. A 503 without it may
 * just as well be a proxy with nothing behind it, and stays an ordinary failure.
 */
export function busyForSeconds(exchange: HttpExchange): number | undefined {
  if (exchange.end !== 'status' || exchange.status !== 503 || exchange.retryAfter === undefined) return undefined;
  const text = exchange.retryAfter.trim();
  const seconds = /^\d+$/.test(text) ? Number(text) : (Date.parse(text) - Date.now()) / 1000;
  return Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds)) : undefined;
}

export function failureKind(exchange: HttpExchange): FailureKind {
  if (exchange.end === 'network' || exchange.end === 'timeout') return 'unreachable';
  if (exchange.end === 'status' && isAuthStatus(exchange.status)) return 'auth';
  return 'protocol';
}

/** Error codes that mean no connection could be made (as opposed to one that broke mid-answer). */
const CONNECT_FAILURES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * The server could not be connected to at all: it is down or the URL is wrong, so the supervisor backs
 * off. A connection that broke mid-answer fails only its own request (a stale keep-alive socket can).
 */
export function isConnectFailure(error: Error | undefined): boolean {
  if (!error) return false;
  if (error instanceof AggregateError)
    return error.errors.length > 0 && error.errors.every((e) => isConnectFailure(e as Error));
  return CONNECT_FAILURES.has((error as NodeJS.ErrnoException).code ?? '');
}

function describeError(error: Error | undefined): string {
  if (!error) return 'unknown error';
  // Connecting to a name with several addresses fails with an AggregateError whose own message is empty.
  if (error instanceof AggregateError && error.errors.length)
    return error.errors.map((e: Error) => describeError(e)).join('; ');
  const code = (error as NodeJS.ErrnoException).code;
  const message = error.message || error.name;
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

function snippet(body: unknown): string {
  const text = typeof body === 'string' ? body : (JSON.stringify(body) ?? '');
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat || '(empty)';
}
