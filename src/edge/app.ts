// The HTTP edge: POST /mcp (every upstream, aggregated) and POST /servers/<name>/mcp (one upstream), read
// top to bottom in the order a request meets each check.
import { createHmac } from 'node:crypto';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono, type Context } from 'hono';
import type { Upstream } from '../../bridge/upstream.js';
import { ANONYMOUS } from '../cached-upstream.js';
import type { ListenHub } from '../notify/listen-hub.js';
import { ErrorCode, isObject, type JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { Log } from '../protocol/log.js';
import { corsHeaders, preflightHeaders } from './cors.js';
import { checkAccept, checkContentType, tooLarge } from './http-rules.js';
import { forwardedParamHeaders, NodeHeaders, readBody } from './node-io.js';
import { originChecker } from './origin.js';
import { ToolHeaderIndex } from './param-headers.js';
import { reject, type Rejection } from './rejection.js';
import { keepRelayedCapabilities } from './relayed-capabilities.js';
import { checkMessage } from './request-rules.js';
import { respondJson, respondSse, type CallOptions, type Observe } from './respond.js';

export interface EdgeOptions {
  upstreams: ReadonlyMap<string, Upstream>;
  /** Serves /mcp when given. */
  aggregate: Upstream | undefined;
  allowedOrigins: readonly string[];
  maxBodyBytes: number;
  listen: ListenHub;
  /** Keys the hash of a caller's credentials that keeps its private cache entries apart. */
  contextKey: Buffer;
  log: Log;
}

interface Endpoint {
  upstream: Upstream;
  /** x-mcp-header declarations seen in this endpoint's tools/list answers. */
  toolHeaders: ToolHeaderIndex;
}

const ALLOW_POST = { allow: 'POST, OPTIONS' };

export function createApp(options: EdgeOptions): Hono<{ Bindings: HttpBindings }> {
  const { maxBodyBytes, log } = options;
  const originAllowed = originChecker(options.allowedOrigins);
  const endpoints = new Map<string, Endpoint>();
  for (const [name, upstream] of options.upstreams) endpoints.set(name, { upstream, toolHeaders: new ToolHeaderIndex() });
  const aggregate: Endpoint | undefined = options.aggregate && { upstream: options.aggregate, toolHeaders: new ToolHeaderIndex() };
  const paths = [...(aggregate ? ['/mcp'] : []), ...[...endpoints.keys()].map((n) => `/servers/${n}/mcp`)];
  const app = new Hono<{ Bindings: HttpBindings }>();

  async function serve(c: Context<{ Bindings: HttpBindings }>, endpoint: Endpoint | undefined, name: string): Promise<Response> {
    const { incoming, outgoing } = c.env;
    const origin = incoming.headers.origin;
    if (!originAllowed(origin)) {
      return send(c, reject(403, null, ErrorCode.InvalidRequest, `Origin ${origin} is not allowed; add it to listen.allowedOrigins to let browsers from it in`));
    }
    const cors = origin === undefined ? undefined : corsHeaders(origin);
    if (!endpoint) {
      return send(c, reject(404, null, ErrorCode.InvalidRequest, `No server named '${name}'. Endpoints: ${paths.join(', ')}`), cors);
    }
    const headers = new NodeHeaders(incoming.headers);
    const transportProblem = checkContentType(headers.get('content-type')) ?? checkAccept(headers.get('accept'));
    if (transportProblem) return send(c, transportProblem, cors);

    const text = await readBody(incoming, maxBodyBytes);
    if (text === null) return RESPONSE_ALREADY_SENT; // the client went away mid-body: nobody to answer
    if (text === undefined) return send(c, tooLarge(maxBodyBytes), { ...cors, connection: 'close' });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return send(c, reject(400, null, ErrorCode.ParseError, 'Parse error: the body is not valid JSON'), cors);
    }

    const checked = checkMessage(body, headers, endpoint.toolHeaders);
    if (checked.kind === 'rejected') return send(c, checked.rejection, cors);
    if (checked.kind === 'notification') {
      // Over HTTP a client cancels by closing its stream; no client notification needs forwarding.
      log.debug({ endpoint: name, method: checked.message.method }, 'notification accepted');
      return c.body(null, 202, cors);
    }

    const message = checked.message;
    if (cors) for (const [key, value] of Object.entries(cors)) outgoing.setHeader(key, value);
    if (message.method === 'subscriptions/listen') {
      options.listen.open(message, outgoing, endpoint === aggregate ? undefined : name);
      return RESPONSE_ALREADY_SENT;
    }
    const observe: Observe =
      message.method === 'tools/list' ? (response) => learnTools(endpoint, response)
      : message.method === 'server/discover' ? keepRelayedCapabilities
      : ignore;
    const call = {
      forwardHeaders: message.method === 'tools/call' ? forwardedParamHeaders(incoming.headers) : undefined,
      authContext: authContext(options.contextKey, incoming.headers.authorization),
    };
    const meta = message.params?._meta;
    if (isObject(meta) && meta.progressToken !== undefined) await respondSse(endpoint.upstream, message, outgoing, observe, call);
    else await respondJson(endpoint.upstream, message, outgoing, observe, call);
    return RESPONSE_ALREADY_SENT;
  }

  if (aggregate) app.post('/mcp', (c) => serve(c, aggregate, 'mcp'));
  app.post('/servers/:name/mcp', (c) => serve(c, endpoints.get(c.req.param('name')), c.req.param('name')));

  for (const path of ['/mcp', '/servers/:name/mcp']) {
    app.options(path, (c) => {
      const origin = c.req.header('origin');
      if (origin === undefined) return c.body(null, 204, ALLOW_POST);
      if (!originAllowed(origin)) {
        return send(c, reject(403, null, ErrorCode.InvalidRequest, `Origin ${origin} is not allowed; add it to listen.allowedOrigins to let browsers from it in`));
      }
      return c.body(null, 204, { ...ALLOW_POST, ...preflightHeaders(origin, c.req.header('access-control-request-headers')) });
    });
    app.on(['GET', 'DELETE', 'PUT', 'PATCH'], path, (c) =>
      send(c, reject(405, null, ErrorCode.InvalidRequest, 'This endpoint takes POST only (MCP 2026-07-28 has no GET stream and no sessions)'), ALLOW_POST),
    );
  }

  app.notFound((c) => send(c, reject(404, null, ErrorCode.InvalidRequest, `Nothing at ${c.req.path}. MCP endpoints: ${paths.join(', ')}`)));

  app.onError((error, c) => {
    log.error({ err: error, path: c.req.path }, 'unexpected error in the HTTP edge');
    return send(c, reject(500, null, ErrorCode.InternalError, 'Internal error in mcp-gateway; see the gateway log'));
  });

  return app;
}

/**
 * Callers are told apart by their credentials (until policy/ names principals): a keyed hash, so what
 * lands in a shared cache cannot be used to confirm a guessed token.
 */
function authContext(key: Buffer, authorization: string | undefined): string {
  return authorization === undefined ? ANONYMOUS : createHmac('sha256', key).update(authorization).digest('base64url').slice(0, 22);
}

function learnTools(endpoint: Endpoint, response: JsonRpcResponse): void {
  if ('result' in response) endpoint.toolHeaders.learn(response.result);
}

function send(c: Context, rejection: Rejection, headers: Record<string, string> = {}): Response {
  return c.json(rejection.body, rejection.status, headers);
}

function ignore(): void {}
