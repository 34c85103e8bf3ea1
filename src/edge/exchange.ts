// How the MCP endpoints see a request and write an answer: Node's own request and response, whether Hono
// routed the request or the fast path in app.ts did; refusals as JSON bodies; which paths the fast path takes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from './answered.js';
import type { Context } from 'hono';
import type { Refusal } from './rejection.js';
import { writeJsonBody } from './node-io.js';
import type { Rejection } from './rejection.js';

export interface NodeExchange {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  path: string;
}

export function exchangeOf(c: Context<{ Bindings: HttpBindings }>): NodeExchange {
  return { incoming: c.env.incoming, outgoing: c.env.outgoing, path: c.req.path };
}

export function writeJson(
  outgoing: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  writeJsonBody(outgoing, status, [Buffer.from(JSON.stringify(body))], headers);
  return RESPONSE_ALREADY_SENT;
}

/** A rejection, on the MCP endpoints (Node's response) or on Hono's other routes. */
export function send(c: NodeExchange | Context, rejection: Rejection, headers: Record<string, string> = {}): Response {
  if ('outgoing' in c) return writeJson(c.outgoing, rejection.status, rejection.body, headers);
  return c.json(rejection.body, rejection.status, headers);
}

export function refuse(c: NodeExchange, refusal: Refusal, cors: Record<string, string> = {}): Response {
  return writeJson(c.outgoing, refusal.status, refusal.body, { ...cors, ...refusal.headers });
}

/**
 * '' for /mcp, the server's name for /servers/<name>/mcp, undefined for any other path. Only plain
 * spellings: anything unusual (percent-escapes, dot segments, doubled slashes) goes through Hono's router,
 * which answers it as before.
 */
export function mcpEndpointName(url: string): string | undefined {
  return plainEndpointName(url, '/mcp', '/servers/');
}

/** For the plain spellings of /profiles/<name>/mcp the profile's name, '' for /search/mcp, else undefined. */
export function viewEndpointName(url: string): string | undefined {
  return plainEndpointName(url, '/search/mcp', '/profiles/');
}

/** '' for `bare`, the name for `<prefix><name>/mcp`, undefined for anything else or any unusual spelling. */
function plainEndpointName(url: string, bare: string, prefix: string): string | undefined {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (path === bare) return '';
  if (!path.startsWith(prefix) || !path.endsWith('/mcp')) return undefined;
  const name = path.slice(prefix.length, -'/mcp'.length);
  return name.length > 0 && !/[/%.]/.test(name) ? name : undefined;
}
