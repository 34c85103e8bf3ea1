// Log messages (`notifications/message`) are request-scoped in the 2026-07-28 revision: a request gets them
// only when its `_meta["io.modelcontextprotocol/logLevel"]` asks, and only at or above that level. Upstreams
// are not all trusted to hold to that (a 2025 server's level is its connection's, set for the most
// verbose caller), so the edge decides what each caller sees, whatever the upstream sent.
import { isObject, type JsonRpcNotification, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { logSeverity, META } from '../../protocol/mcp.js';

/** Whether the caller of `message` is to see `notification` on its stream. */
export function logFilter(message: JsonRpcRequest): (notification: JsonRpcNotification) => boolean {
  const meta = message.params?._meta;
  const wanted = logSeverity(isObject(meta) ? meta[META.logLevel] : undefined);
  return (notification) =>
    notification.method !== 'notifications/message' ||
    (wanted >= 0 && logSeverity(notification.params?.level) >= wanted);
}
