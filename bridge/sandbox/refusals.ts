// What sandboxes refused, counted per server for the metrics (mcp_gateway_sandbox_refused_total). Its own
// small module with nothing to load, so the metrics can read it without loading the sandbox itself.

/**
 * `host`: a connection to a host not on network.allow (CONNECT or plain HTTP through the proxy);
 * `syscall`: a child killed by the seccomp filter (SIGSYS); `cpu`: a child that used its cpuSeconds (SIGXCPU).
 */
export type RefusalKind = 'host' | 'syscall' | 'cpu';

/** Refusals so far, by server and then by kind. */
export const sandboxRefusals = new Map<string, Map<string, number>>();

export function countRefusal(server: string, kind: RefusalKind): void {
  let kinds = sandboxRefusals.get(server);
  if (!kinds) sandboxRefusals.set(server, (kinds = new Map()));
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
}
