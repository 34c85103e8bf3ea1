// The filtering proxy behind `sandbox.network.allow`: an HTTP proxy on a unix socket, one per sandboxed
// server, that reaches only the hosts on that server's list: it tunnels CONNECT (https and anything else
// over TLS) and forwards plain-HTTP requests in absolute form (`GET http://host/path`). The socket is bound
// into the child's sandbox, which has no network of its own; socat there offers it on 127.0.0.1:3128, and
// the child's HTTP(S)_PROXY points at that. A host off the list is refused (403), logged once per server
// and counted in the metrics.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse, request as httpRequest } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { Log } from '../../infra/log.js';
import { countRefusal } from './refusals.js';

/** Where the child finds the proxy inside its sandbox. */
export const PROXY_PORT = 3128;
export const PROXY_SOCKET_INSIDE = '/run/mcp-sandbox/proxy.sock';

export interface ConnectProxy {
  /** The unix socket on the host, to bind into the sandbox. */
  socket: string;
  /** Hosts refused so far (each logged once). */
  refused: ReadonlySet<string>;
  close(): void;
}

/** Whether `host:port` is on the list: an entry `host` allows ports 443 and 80, `host:port` that port only. */
export function allowed(hosts: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return hosts.some((entry) => {
    const [entryHost, entryPort] = entry.toLowerCase().split(/:(?=\d+$)/);
    if (entryHost !== name) return false;
    return entryPort === undefined ? port === 443 || port === 80 : Number(entryPort) === port;
  });
}

const made: string[] = [];
process.once('exit', () => {
  for (const folder of made) rmSync(folder, { recursive: true, force: true });
});

export async function startConnectProxy(server: string, hosts: readonly string[], log: Log): Promise<ConnectProxy> {
  // Its own folder: a root gateway's children run as nobody, who must reach the socket but not list the folder.
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-sandbox-proxy-'));
  made.push(folder);
  chmodSync(folder, 0o711);
  const socket = path.join(folder, 'proxy.sock');
  const refused = new Set<string>();
  /** A host off the list: logged the first time, counted every time. */
  const refuse = (asked: string): void => {
    countRefusal(server, 'host');
    if (refused.has(asked)) return;
    refused.add(asked);
    log.warn({ host: asked }, `servers.${server}: refused a connection to a host not on sandbox.network.allow`);
  };
  const http = createServer((request, response) => forward(request, response, hosts, refuse));
  http.on('connect', (request: IncomingMessage, client: Duplex, head: Buffer) => {
    const target = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(request.url ?? '');
    const host = target?.[1] ?? '';
    const port = Number(target?.[2]);
    client.on('error', () => {});
    if (!target || !allowed(hosts, host, port)) {
      refuse(request.url ?? '?');
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${NOT_ALLOWED}`);
      return;
    }
    const upstream = net.connect({ host: unbracketed(host), port });
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client).on('error', () => upstream.destroy());
      client.pipe(upstream);
      client.on('close', () => upstream.destroy());
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(socket, () => resolve());
  });
  chmodSync(socket, 0o666);
  http.unref(); // the gateway's own shutdown is not held up by it
  return {
    socket,
    refused,
    close: () => {
      http.close();
      http.closeAllConnections();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

const NOT_ALLOWED = 'not on sandbox.network.allow\n';
/** Hop-by-hop headers: about the connection to the proxy, not for the host behind it. */
const HOP_BY_HOP = ['connection', 'proxy-connection', 'proxy-authorization', 'keep-alive', 'te', 'upgrade'];

/** A plain-HTTP request in absolute form (`GET http://host:port/path`), sent on to an allowed host. */
function forward(
  request: IncomingMessage,
  response: ServerResponse,
  hosts: readonly string[],
  refuse: (asked: string) => void,
): void {
  let target: URL | undefined;
  try {
    target = new URL(request.url ?? '');
  } catch {
    // an origin-form request (`GET /path`): not meant for a proxy
  }
  if (target?.protocol !== 'http:') {
    response
      .writeHead(400, { 'content-type': 'text/plain' })
      .end('this proxy forwards http://host/path requests and tunnels the rest (CONNECT)\n');
    return;
  }
  const port = Number(target.port || 80);
  if (!allowed(hosts, target.hostname, port)) {
    refuse(`${target.hostname}:${port}`);
    response.writeHead(403, { 'content-type': 'text/plain' }).end(NOT_ALLOWED);
    return;
  }
  const headers = { ...request.headers };
  for (const name of HOP_BY_HOP) delete headers[name];
  const outgoing = httpRequest(
    {
      host: unbracketed(target.hostname),
      port,
      method: request.method,
      path: target.pathname + target.search,
      headers,
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
      answer.pipe(response);
    },
  );
  outgoing.on('error', () => {
    if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
    response.end();
  });
  request.pipe(outgoing);
}

function unbracketed(host: string): string {
  return host.replace(/^\[|\]$/g, '');
}
