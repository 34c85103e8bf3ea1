// /healthz (the process answers) and /readyz (every required upstream is ready), as JSON that says what is
// not ready and why, for load balancers, orchestrators and people.
import type { UpstreamStatus } from '../../bridge/upstream.js';

export interface UpstreamHealth {
  name: string;
  required: boolean;
  status: UpstreamStatus;
}

export function liveness(startedAt: number): { status: 'ok'; uptimeSeconds: number } {
  return { status: 'ok', uptimeSeconds: Math.round((Date.now() - startedAt) / 1000) };
}

export function readiness(upstreams: Iterable<UpstreamHealth>, draining: boolean): { ready: boolean; body: object } {
  const notReady: { server: string; state: string; lastError?: string }[] = [];
  const states: Record<string, string> = {};
  for (const { name, required, status } of upstreams) {
    states[name] = status.state;
    if (required && status.state !== 'ready') notReady.push({ server: name, state: status.state, ...(status.lastError && { lastError: status.lastError }) });
  }
  if (draining) return { ready: false, body: { status: 'draining', upstreams: states } };
  return notReady.length === 0
    ? { ready: true, body: { status: 'ready', upstreams: states } }
    : { ready: false, body: { status: 'not ready', notReady, upstreams: states } };
}
