// What sandboxes refused, counted per server for the metrics (mcp_gateway_sandbox_refused_total). Its own
// small module with nothing to load, so the metrics can read it without loading the sandbox itself.

/** Refusals so far, by server and then by kind (`host`: a connection to a host not on network.allow). */
export const sandboxRefusals = new Map<string, Map<string, number>>();

export function countRefusal(server: string, kind: 'host'): void {
  let kinds = sandboxRefusals.get(server);
  if (!kinds) sandboxRefusals.set(server, (kinds = new Map()));
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
}
