// The request's span, when the edge traces (EdgeContext.tracer set): started once the message is read, as
// its parent may be in _meta, but dated from the request's arrival; its parent from the W3C traceparent
// and tracestate headers, else params._meta's, else none (a new trace). Untraced, none of this runs.
import type { IncomingHttpHeaders } from 'node:http';
import { isObject, parseMessage, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { callAttributes, type GatewayTracer, spanName } from '../telemetry/index.js';
import { digest } from '../mrtr/index.js';
import type { McpCall } from './call.js';

/** Starts the span of a request that was read; the caller's context wins in the headers, then in _meta. */
export function startRequestSpan(tracer: GatewayTracer, call: McpCall, message: JsonRpcRequest): void {
  const { incoming } = call.exchange;
  const meta = message.params?._meta;
  const fromHeaders = single(incoming.headers.traceparent);
  const parent = !parentAccepted(tracer, call)
    ? undefined
    : fromHeaders !== undefined
      ? incoming.headers
      : isObject(meta)
        ? meta
        : undefined;
  const attributes = callAttributes(message);
  addEdgeAttributes(call, incoming.headers, attributes);
  const span = (call.span = tracer.startRequest({
    name: spanName(message),
    traceparent: parent === undefined ? undefined : single(parent.traceparent),
    tracestate: parent === undefined ? undefined : single(parent.tracestate),
    startedAt: call.started,
    attributes,
  }));
  // Only a real decision is worth an event: without authentication every caller is anonymous.
  if (call.security.authenticator.enabled || call.vouched)
    span.event('mcp.gateway.authenticated', { 'mcp.gateway.principal.via': call.principal.via });
}

/**
 * Starts the span of a 2025 client's request, named for its 2025 message; false when the body is none (a
 * notification, an answer, a batch: those keep the span of an unread request). The protocol version is
 * the session's, from its header, as a 2025 message carries none in _meta.
 */
export function startLegacySpan(tracer: GatewayTracer, call: McpCall, body: unknown): boolean {
  const parsed = parseMessage(body);
  if (parsed.kind !== 'request') return false;
  startRequestSpan(tracer, call, parsed.message);
  const version = single(call.exchange.incoming.headers['mcp-protocol-version']);
  if (version !== undefined) call.span!.setAttribute('mcp.protocol.version', version);
  return true;
}

/** A request refused before its message was read (origin, credentials, rate, body) still leaves a span. */
export function spanForUnread(tracer: GatewayTracer, call: McpCall): void {
  const { headers } = call.exchange.incoming;
  const attributes: Record<string, string> = { 'mcp.gateway.outcome': call.outcome };
  if (call.method !== undefined) attributes['mcp.method.name'] = call.method;
  addEdgeAttributes(call, headers, attributes);
  const accepted = parentAccepted(tracer, call);
  const span = tracer.startRequest({
    name: call.method ?? 'mcp request',
    traceparent: accepted ? single(headers.traceparent) : undefined,
    tracestate: accepted ? single(headers.tracestate) : undefined,
    startedAt: call.started,
    attributes,
  });
  if (call.outcome !== 'ok') span.fail(call.outcome);
  span.end();
}

/** Ends the request's span with how the request ended. */
export function endRequestSpan(call: McpCall, error: unknown): void {
  const span = call.span!;
  span.setAttribute('mcp.gateway.outcome', call.outcome);
  if (error !== undefined)
    span.fail(
      error instanceof Error ? error.constructor.name : 'exception',
      error instanceof Error ? error.message : undefined,
    );
  else if (call.outcome === 'denied' || call.outcome === 'cancelled') span.fail(call.outcome);
  span.end();
}

function addEdgeAttributes(
  call: McpCall,
  headers: IncomingHttpHeaders,
  attributes: Record<string, string | number | boolean>,
): void {
  attributes['network.transport'] = 'tcp';
  attributes['network.protocol.name'] = 'http';
  attributes['network.protocol.version'] = call.exchange.incoming.httpVersion;
  attributes['mcp.server.name'] = call.server ?? 'mcp';
  const address = call.exchange.incoming.socket.remoteAddress;
  if (address !== undefined) attributes['client.address'] = address;
  // A 2025 session's id is its whole secret with anonymous access: a trace carries its digest, never the id.
  const session = single(headers['mcp-session-id']);
  if (session !== undefined) attributes['mcp.session.id'] = sessionDigest(session);
}

/**
 * The digest traces carry for a 2025 session id: the same for every request of the session, useless to end or use it.
 */
export function sessionDigest(sessionId: string): string {
  return digest(sessionId).slice(0, 32);
}

/**
 * Whether the caller's trace context may parent its span (telemetry.traces.acceptParents): by default once
 * it authenticated, so an unauthenticated request cannot graft its refusals onto someone else's trace. A
 * retry another replica forwarded joins the trace the replica sent, whatever the setting.
 */
function parentAccepted(tracer: GatewayTracer, call: McpCall): boolean {
  if (call.vouched !== undefined) return true;
  const accept = tracer.acceptParents;
  if (accept === 'any') return true;
  if (accept === 'none') return false;
  return !call.security.authenticator.enabled || call.principal.via !== 'anonymous';
}

function single(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
