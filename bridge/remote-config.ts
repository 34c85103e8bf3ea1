// What a remote upstream is configured with, whichever transport the URL turns out to speak: Streamable HTTP
// (bridge/http/) or, found there by the era probe, 2024-11-05 HTTP+SSE (bridge/sse/). Its own file so that the
// SSE transport, which the HTTP one falls back to, needs nothing of the HTTP one back.
import type { ServerInfo } from '../protocol/mcp.js';
import type { BackoffPolicy } from './backoff.js';
import type { Era } from './upstream.js';

export interface HttpUpstreamConfig {
  name: string;
  /** The server's MCP endpoint, http:// or https://. */
  url: string;
  /** Sent with every request (for example Authorization with a secret from ${VAR}). */
  headers: Record<string, string>;
  era: Era | 'auto';
  timeoutMs: number;
  /** Deadline of the era probe, and of opening a connection. */
  probeTimeoutMs: number;
  /** ttlMs given to a legacy server's cacheable results. */
  legacyTtlMs: number;
  clientInfo: ServerInfo;
  backoff: BackoffPolicy;
  /** Largest JSON answer or SSE event accepted (default 16 MiB). */
  maxMessageBytes?: number;
}
