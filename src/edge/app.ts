// The HTTP edge: POST /servers/<name>/mcp, read top to bottom in the order a request meets each check.
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono, type Context } from 'hono';
import type { Upstream } from '../../bridge/upstream.js';
import { ErrorCode, isObject, type JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { Log } from '../protocol/log.js';
import { checkAccept, checkContentType, tooLarge } from './http-rules.js';
import { NodeHeaders, readBody } from './node-io.js';
import { originChecker } from './origin.js';
import { ToolHeaderIndex } from './param-headers.js';
import { reject, type Rejection } from './rejection.js';
import { checkMessage } from './request-rules.js';
import { respondJson, respondSse } from './respond.js';

export interface EdgeOptions {
  upstreams: ReadonlyMap<string, Upstream>;
  allowedOrigins: readonly string[];
  maxBodyBytes: number;
  log: Log;
}

const NOT_ALLOWED_HEADERS = { allow: 'POST' };

export function createApp(options: EdgeOptions): Hono<{ Bindings: HttpBindings }> {
  const { upstreams, maxBodyBytes, log } = options;
  const originAllowed = originChecker(options.allowedOrigins);
  const toolHeaders = new Map<string, ToolHeaderIndex>([...upstreams.keys()].map((name) => [name, new ToolHeaderIndex()]));
  const knownNames = (): string => [...upstreams.keys()].join(', ') || '(none configured)';
  const app = new Hono<{ Bindings: HttpBindings }>();

  app.post('/servers/:name/mcp', async (c) => {
    const name = c.req.param('name');
    const upstream = upstreams.get(name);
    if (!upstream) {
      return send(c, reject(404, null, ErrorCode.InvalidRequest, `No server named '${name}'. Known servers: ${knownNames()}`));
    }
    const { incoming, outgoing } = c.env;
    const headers = new NodeHeaders(incoming.headers);
    if (!originAllowed(incoming.headers.origin)) {
      return send(c, reject(403, null, ErrorCode.InvalidRequest, `Origin ${headers.get('origin')} is not allowed; add it to listen.allowedOrigins to let browsers from it in`));
    }
    const transportProblem = checkContentType(headers.get('content-type')) ?? checkAccept(headers.get('accept'));
    if (transportProblem) return send(c, transportProblem);

    const text = await readBody(incoming, maxBodyBytes);
    if (text === undefined) return send(c, tooLarge(maxBodyBytes));
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return send(c, reject(400, null, ErrorCode.ParseError, 'Parse error: the body is not valid JSON'));
    }

    const index = toolHeaders.get(name)!;
    const checked = checkMessage(body, headers, index);
    if (checked.kind === 'rejected') return send(c, checked.rejection);
    if (checked.kind === 'notification') {
      // Over HTTP a client cancels by closing its stream; no client notification needs forwarding.
      log.debug({ server: name, method: checked.message.method }, 'notification accepted');
      return c.body(null, 202);
    }

    const message = checked.message;
    if (message.method === 'subscriptions/listen') {
      return send(c, reject(404, message.id, ErrorCode.MethodNotFound, 'subscriptions/listen is not supported by mcp-gateway yet'));
    }
    const observe = message.method === 'tools/list'
      ? (response: JsonRpcResponse) => {
          if ('result' in response) index.learn(response.result);
        }
      : ignore;
    const meta = message.params?._meta;
    if (isObject(meta) && meta.progressToken !== undefined) await respondSse(upstream, message, outgoing, observe);
    else await respondJson(upstream, message, outgoing, observe);
    return RESPONSE_ALREADY_SENT;
  });

  app.on(['GET', 'DELETE', 'PUT', 'PATCH'], '/servers/:name/mcp', (c) =>
    send(c, reject(405, null, ErrorCode.InvalidRequest, 'This endpoint takes POST only (MCP 2026-07-28 has no GET stream and no sessions)'), NOT_ALLOWED_HEADERS),
  );

  app.notFound((c) =>
    send(c, reject(404, null, ErrorCode.InvalidRequest, `Nothing at ${c.req.path}. MCP endpoints: ${[...upstreams.keys()].map((n) => `/servers/${n}/mcp`).join(', ')}`)),
  );

  app.onError((error, c) => {
    log.error({ err: error, path: c.req.path }, 'unexpected error in the HTTP edge');
    return send(c, reject(500, null, ErrorCode.InternalError, 'Internal error in mcp-gateway; see the gateway log'));
  });

  return app;
}

function send(c: Context, rejection: Rejection, extraHeaders: Record<string, string> = {}): Response {
  return c.json(rejection.body, rejection.status, extraHeaders);
}

function ignore(): void {}
