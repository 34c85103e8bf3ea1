// Driving a bridge HttpUpstream on its own (no gateway in front), for the tests of the HTTP upstream and of a
// 2025 session's GET stream: its config, the requests handed to it, and starting it.
import { HttpUpstream, type HttpUpstreamConfig } from '../../bridge/http/http-upstream.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { silentLog, type Log } from '../../infra/log.js';
import { META } from './harness.js';

/** An upstream config as the loader would make it, with short timeouts and backoff; `extra` over it. */
export function upstreamConfig(name: string, url: string, extra: Partial<HttpUpstreamConfig> = {}): HttpUpstreamConfig {
  return {
    name,
    url,
    headers: {},
    era: 'auto',
    timeoutMs: 10_000,
    probeTimeoutMs: 3_000,
    legacyTtlMs: 1234,
    clientInfo: { name: 'mcp-gateway-test', version: '0.0.0' },
    backoff: { initialMs: 500, maxMs: 5_000, crashLimit: 5, windowMs: 60_000 },
    ...extra,
  };
}

/**
 * A request as the edge hands it on: the protocol version and client capabilities in _meta (a given _meta adds to
 * them).
 */
export function upstreamRequest(
  id: string | number,
  method: string,
  params: Record<string, unknown> = {},
): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method,
    params: { ...params, _meta: { ...META, ...(params._meta as object | undefined) } },
  };
}

/** A started upstream, logging to `log` if given, else where TEST_LOG says (silent unless set). */
export async function started(config: HttpUpstreamConfig, given?: Log): Promise<HttpUpstream> {
  const log =
    given ??
    (process.env.TEST_LOG ? (await import('../../infra/logger.js')).createLogger(process.env.TEST_LOG) : silentLog);
  const upstream = new HttpUpstream(config, log);
  await upstream.start();
  return upstream;
}
