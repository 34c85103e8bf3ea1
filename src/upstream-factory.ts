// Turns one validated server entry into the Upstream that serves it.
import { availableParallelism } from 'node:os';
import { DEFAULT_BACKOFF } from '../bridge/backoff.js';
import { loadHttpUpstream } from '../bridge/http/index.js';
import { loadSandbox } from '../bridge/sandbox/index.js';
import { StdioUpstream } from '../bridge/stdio/index.js';
import type { Upstream } from '../bridge/upstream.js';
import { childEnvironment } from './child-env.js';
import type {
  HttpServerConfig,
  OpenApiServerConfig,
  ServerConfig,
  SseServerConfig,
  StdioServerConfig,
} from './config/index.js';
import type { Log } from '../infra/log.js';
import { GATEWAY_INFO } from '../infra/version.js';
import { type ChildEnvSource, loadPerCallerFactory } from './layers/index.js';

export async function createUpstream(
  name: string,
  server: ServerConfig,
  log: Log,
  envReads: readonly string[],
  envSource?: ChildEnvSource,
): Promise<Upstream> {
  switch (server.transport) {
    case 'sse':
      return sseUpstream(name, server, log);
    case 'openapi':
      return openApiUpstream(name, server, log);
    case 'http':
      return httpUpstream(name, server, log);
    default:
      return stdioUpstream(name, server, log, envReads, envSource);
  }
}

/** A 2025 server over HTTP+SSE (bridge/sse/, loaded only when configured). */
async function sseUpstream(name: string, server: SseServerConfig, log: Log): Promise<Upstream> {
  const { SseUpstream } = await import('../bridge/sse/index.js');
  if (server.era === 'modern')
    log.warn(
      {},
      `servers.${name}.era: modern is ignored: an HTTP+SSE (transport: sse) server is always of the 2025 era`,
    );
  return new SseUpstream(
    {
      name,
      url: server.url,
      headers: server.headers,
      timeoutMs: server.timeoutMs,
      probeTimeoutMs: server.probeTimeoutMs,
      legacyTtlMs: server.legacyTtlMs,
      clientInfo: GATEWAY_INFO,
      backoff: DEFAULT_BACKOFF,
      roots: server.roots,
    },
    log,
  );
}

/** A remote server over Streamable HTTP. */
async function httpUpstream(name: string, server: HttpServerConfig, log: Log): Promise<Upstream> {
  // Loaded only when a remote server is configured: undici stays out of a stdio-only gateway's memory.
  const { HttpUpstream } = await loadHttpUpstream();
  return new HttpUpstream(
    {
      name,
      url: server.url,
      headers: server.headers,
      // Reached as each caller, there is nobody to probe the era as: such a server is taken to be 2026-era.
      era: server.credentials ? 'modern' : server.era,
      timeoutMs: server.timeoutMs,
      probeTimeoutMs: server.probeTimeoutMs,
      legacyTtlMs: server.legacyTtlMs,
      clientInfo: GATEWAY_INFO,
      backoff: DEFAULT_BACKOFF,
    },
    log,
  );
}

/** A local program: one child, a child per caller, or a pool; sandboxed when its entry says so. */
async function stdioUpstream(
  name: string,
  server: StdioServerConfig,
  log: Log,
  envReads: readonly string[],
  envSource: ChildEnvSource | undefined,
): Promise<Upstream> {
  const { env, withheld } = childEnvironment(process.env, server.inheritEnv, new Set(envReads), server.env);
  if (withheld.length) {
    log.warn(
      { withheld },
      `servers.${name}.inheritEnv matches variables this config reads; the child does not get them (hand one over ` +
        `on purpose with servers.${name}.env)`,
    );
  }
  const launch = { command: server.command, args: server.args, cwd: server.cwd, env };
  if (!server.sandboxPolicy) return stdioChildren(name, server, launch, log, envSource);
  // Loaded only when this server is sandboxed: a gateway without sandboxes never probes for one.
  const { sandboxChild } = await loadSandbox();
  const sandboxed = await sandboxChild(name, launch, server.sandboxPolicy, log);
  try {
    return releasingOnClose(await stdioChildren(name, server, sandboxed, log, envSource), sandboxed.release);
  } catch (error) {
    sandboxed.release();
    throw error;
  }
}

/** The server's sandbox proxy and status FIFO live as long as its upstream: a removed server's go with it. */
function releasingOnClose(upstream: Upstream, release: () => void): Upstream {
  const close = upstream.close.bind(upstream);
  upstream.close = async () => {
    try {
      await close();
    } finally {
      release();
    }
  };
  return upstream;
}

/** One child, a child per caller, or a pool, each started as `child` says (bare or sandboxed). */
async function stdioChildren(
  name: string,
  server: StdioServerConfig,
  child: { command: string; args: string[]; cwd: string; env: Record<string, string> },
  log: Log,
  envSource: ChildEnvSource | undefined,
): Promise<Upstream> {
  const config = {
    name,
    command: child.command,
    args: child.args,
    env: child.env,
    cwd: child.cwd,
    maxLineBytes: server.maxLineBytes,
    era: server.era,
    timeoutMs: server.timeoutMs,
    probeTimeoutMs: server.probeTimeoutMs,
    startupTimeoutMs: server.startupTimeoutMs,
    legacyTtlMs: server.legacyTtlMs,
    shutdownGraceMs: server.shutdownGraceMs,
    backoff: DEFAULT_BACKOFF,
    clientInfo: GATEWAY_INFO,
    roots: server.roots,
  };
  const instances = childCount(server.instances);
  // Loaded only for a server with a child per caller, or a pool: one child needs neither.
  if (server.perCaller)
    return (await loadPerCallerFactory()).perCallerUpstream(
      config,
      instances,
      { idleMs: server.idleMs, maxCallers: server.maxCallers },
      log,
      envSource,
    );
  // One child is served as it always was: no pool in front of it, nothing more on its requests' path.
  if (instances === 1) return new StdioUpstream(config, log);
  const children = Array.from(
    { length: instances },
    (_, index) => new StdioUpstream(config, log.child({ child: index })),
  );
  log.info({ instances }, 'serving the server as a pool of children');
  const { PooledUpstream } = await import('../bridge/pool/index.js');
  return new PooledUpstream(name, children, log);
}

/**
 * A REST API from its OpenAPI document (bridge/openapi/, loaded only when configured): read and turned into
 * tools now, so a document that does not load is a load error. `operations:` globs match as policies' do.
 */
async function openApiUpstream(name: string, server: OpenApiServerConfig, log: Log): Promise<Upstream> {
  const [{ OpenApiUpstream }, { anyOf }] = await Promise.all([
    import('../bridge/openapi/index.js'),
    import('../policy/globs.js'),
  ]);
  const allow = server.operations?.allow === undefined ? () => true : anyOf(server.operations.allow);
  const deny = anyOf(server.operations?.deny);
  const prefix = server.prefix ?? name;
  return OpenApiUpstream.load(
    {
      name,
      where: `servers.${name}`,
      document: server.openapi,
      ...(server.baseUrl !== undefined && { baseUrl: server.baseUrl }),
      headers: server.headers,
      timeoutMs: server.timeoutMs,
      listTtlMs: server.listTtlMs,
      maxResponseBytes: server.maxResponseBytes,
      // With the default separator `__`: longer names are still served, hashed to fit (protocol/public-names.ts).
      nameBudget: MAX_PUBLIC_NAME - prefix.length - 2,
      include: (names) => names.some((each) => allow(each)) && !names.some((each) => deny(each)),
    },
    log,
  );
}

const MAX_PUBLIC_NAME = 64;

/** How many children `instances` asks for: `auto` is one per core this process may use. */
export function childCount(instances: number | 'auto'): number {
  return instances === 'auto' ? availableParallelism() : instances;
}
