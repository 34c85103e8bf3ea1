// /healthz (the process answers) and /readyz (every required upstream is ready), as JSON that says what is
// not ready and why, for load balancers, orchestrators and people.
import type { UpstreamStatus } from '../../bridge/upstream.js';

export interface UpstreamHealth {
  name: string;
  required: boolean;
  status: UpstreamStatus;
  /** Every slot taken and requests queued: it answers, slowly. Reported, never a reason to be not ready. */
  saturated?: boolean;
}

export function liveness(startedAt: number): { status: 'ok'; uptimeSeconds: number } {
  return { status: 'ok', uptimeSeconds: Math.round((Date.now() - startedAt) / 1000) };
}

export function readiness(upstreams: Iterable<UpstreamHealth>, draining: boolean): { ready: boolean; body: object } {
  const notReady: { server: string; state: string; lastError?: string }[] = [];
  const states: Record<string, string> = {};
  // A pooled server is ready while one child is; each child's state is shown beside it.
  const children: Record<string, string[]> = {};
  // Saturation is load, not failure: taking this replica out would only pile its load on the others.
  const saturated: string[] = [];
  for (const { name, required, status, saturated: full } of upstreams) {
    states[name] = status.state;
    if (status.children) children[name] = status.children.map((child) => child.state);
    if (full) saturated.push(name);
    if (required && status.state !== 'ready')
      notReady.push({ server: name, state: status.state, ...(status.lastError && { lastError: status.lastError }) });
  }
  const extra = { ...(Object.keys(children).length && { children }), ...(saturated.length && { saturated }) };
  if (draining) return { ready: false, body: { status: 'draining', upstreams: states, ...extra } };
  return notReady.length === 0
    ? { ready: true, body: { status: 'ready', upstreams: states, ...extra } }
    : { ready: false, body: { status: 'not ready', notReady, upstreams: states, ...extra } };
}
