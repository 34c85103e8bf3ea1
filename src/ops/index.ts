// src/ops/: what an operator reads: /health, /ready, /metrics (Prometheus and OpenMetrics), the status page and
// the redacted config view.
export { configView } from './config-view.js';
export { liveness, readiness } from './health.js';
export type { UpstreamHealth } from './health.js';
export { METHOD_OTHER } from './metric-labels.js';
export { GatewayMetrics } from './metrics.js';
export type { LiveCounts, RequestOutcome, UpstreamSnapshot } from './metrics.js';
export { wantsOpenMetrics } from './open-metrics.js';
export { emptyTraffic, SLOT_MS } from './recent-window.js';
export { renderStatusPage, STATUS_PAGE_CSP } from './status-page.js';
export type { StatusSnapshot } from './status-page.js';
export type { ServerMeter } from './upstream-metrics.js';
