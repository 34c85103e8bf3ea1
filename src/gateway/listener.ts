// The HTTP listener: Node's server in front of the edge, screening every request before it is parsed and
// tracking connections so shutdown can drain them.
import type { AddressInfo } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type Edge, type HostCheck, HttpDrain, screenRequest, writeJson } from '../edge/index.js';
import { ErrorCode, errorResponse } from '../../protocol/jsonrpc.js';
import { ConnectionCap } from './connection-cap.js';

export interface Listening {
  drain: HttpDrain;
  /** Base URL, for example http://127.0.0.1:8080 */
  url: string;
}

export async function listen(
  edge: Edge,
  hostname: string,
  port: number,
  hostAllowed: HostCheck | undefined,
  maxConnections: number,
): Promise<Listening> {
  const { server, drain } = await serve(edge, hostname, port, hostAllowed, maxConnections);
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return { drain, url };
}

function serve(
  edge: Edge,
  hostname: string,
  port: number,
  hostAllowed: HostCheck | undefined,
  maxConnections: number,
): Promise<{ server: Server; drain: HttpDrain }> {
  // HTTP/1.0 allows a request without Host, and load balancers' health checks send them (HAProxy's classic
  // `option httpchk GET /readyz`). Node serves them; Hono needs a host to build a URL (nothing reads it) and
  // would answer 400, so it gets a placeholder. Checks on the Host header still see none.
  const viaHono = honoListener(edge);
  return new Promise((resolve, reject) => {
    const drain = new HttpDrain();
    const server = createServer({ ServerResponse: drain.Response }, (incoming, outgoing) => {
      const refusal = screenRequest(incoming, hostAllowed);
      if (refusal) {
        writeJson(outgoing, refusal.status, refusal.body, { connection: 'close' });
        return;
      }
      if (cap.probesOnlyFor(incoming)) {
        if (edge.serveProbe(incoming, outgoing) === undefined)
          writeJson(outgoing, 503, overCap(cap.maxConnections), { connection: 'close', 'retry-after': '5' });
        return;
      }
      if (edge.serveMcpPost(incoming, outgoing) === undefined && edge.serveProbe(incoming, outgoing) === undefined)
        void viaHono(incoming, outgoing);
    });
    drain.attach(server);
    const cap = new ConnectionCap(server, maxConnections);
    server.listen(port, hostname, () => resolve({ server, drain }));
    // Longer than the idle timeouts of common load balancers (60 s), so they, not the gateway, close idle
    // connections, and a reused connection is not cut as a request arrives on it.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`port ${port} on ${hostname} is in use; pick another with --port or listen.port`)
          : error,
      );
    });
  });
}

type NodeListener = (incoming: IncomingMessage, outgoing: ServerResponse) => unknown;

/**
 * Hono's Node adapter, loaded on the first request that needs it. Loading it reads the global Request and
 * Response, which makes Node load its whole fetch implementation (undici, web streams): about 12 MB of RSS
 * that a gateway serving only MCP POSTs never needs.
 */
function honoListener(edge: Edge): NodeListener {
  let listener: NodeListener | undefined;
  let loading: Promise<NodeListener> | undefined;
  // The adapter's "already sent" marker (src/edge/answered.ts) first: it must be built from Node's own
  // Response, and once getRequestListener runs, the global Response is the adapter's lighter one, which it
  // would answer as an empty 200 and end a stream the route had left open. (When another listener of the
  // adapter in this process replaced it first, honoAnswer rebuilds the marker: src/edge/answered.ts.)
  const load = (): Promise<NodeListener> =>
    (loading ??= import('@hono/node-server/utils/response')
      .then(() => import('@hono/node-server'))
      .then(({ getRequestListener }) => (listener = getRequestListener(edge.app.fetch, { hostname: 'localhost' }))));
  return (incoming, outgoing) =>
    listener ? listener(incoming, outgoing) : load().then((ready) => ready(incoming, outgoing));
}

/** The answer on a connection accepted past listen.maxConnections, to anything but a probe. */
function overCap(maxConnections: number) {
  return errorResponse(
    null,
    ErrorCode.InternalError,
    `mcp-gateway is serving ${maxConnections} connections, its most (listen.maxConnections, below the process's ` +
      `open-file limit); retry shortly, or reuse a connection`,
  );
}
