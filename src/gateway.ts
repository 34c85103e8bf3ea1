// Wires a validated config into running parts: one supervised upstream per server, the HTTP edge, and
// an orderly shutdown of both.
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Upstream } from '../bridge/upstream.js';
import type { GatewayConfig } from './config.js';
import { Aggregator } from './aggregate/aggregator.js';
import { createApp } from './edge/app.js';
import type { Log } from './protocol/log.js';
import { createUpstream } from './upstream-factory.js';


export interface RunningGateway {
  /** Base URL, for example http://127.0.0.1:8080 */
  url: string;
  upstreams: ReadonlyMap<string, Upstream>;
  aggregate: Aggregator;
  close(): Promise<void>;
}

export async function startGateway(config: GatewayConfig, log: Log): Promise<RunningGateway> {
  const upstreams = new Map<string, Upstream>();
  for (const [name, server] of Object.entries(config.servers)) upstreams.set(name, createUpstream(name, server, log.child({ server: name })));

  const { host, port } = config.listen;
  if (!isLoopback(host)) {
    log.warn({ host }, 'listening beyond loopback: anyone who can reach this address can use every server; put authentication and an Origin allow-list in front');
  }
  const aggregate = new Aggregator({
    upstreams,
    prefixes: new Map(Object.entries(config.servers).map(([name, server]) => [name, server.prefix ?? name])),
    separator: config.aggregate.separator,
    listDeadlineMs: config.aggregate.listDeadlineMs,
    cursorSecret: config.aggregate.cursorSecret,
    log: log.child({ endpoint: 'mcp' }),
  });
  const app = createApp({ upstreams, aggregate, allowedOrigins: config.listen.allowedOrigins, maxBodyBytes: config.listen.maxBodyBytes, log });
  const server = await listen(app.fetch, host, port);
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  log.info({ endpoint: `${url}/mcp` }, `serving every server, aggregated`);
  for (const name of upstreams.keys()) log.info({ endpoint: `${url}/servers/${name}/mcp` }, `serving ${name}`);

  // Children start in the background; requests wait for them (up to their timeout).
  for (const upstream of upstreams.values()) void upstream.start();

  return {
    url,
    upstreams,
    aggregate,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await Promise.all([...upstreams.values()].map((u) => u.close()));
    },
  };
}

function listen(fetch: (request: Request) => Response | Promise<Response>, hostname: string, port: number): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname, port }, () => resolve(server));
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE'
        ? new Error(`port ${port} on ${hostname} is in use; pick another with --port or listen.port`)
        : error);
    });
  });
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}
