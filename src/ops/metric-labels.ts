// What the gateway's and the upstreams' metrics share: the latency buckets and the `method` label. A module
// of its own, so metrics.ts (which builds UpstreamMetrics) and upstream-metrics.ts both import it instead of
// each other.
import { MODERN_REQUEST_METHODS } from '../../protocol/mcp.js';

/** The `method` label for a request refused before its body was read. */
export const METHOD_NONE = 'none';
/** The `method` label for any method outside the MCP 2026 request set. */
export const METHOD_OTHER = 'other';

/** Request latency buckets, in seconds: 0.5 ms … 30 s. */
export const DURATION_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/**
 * The `method` label for a request: a method of the MCP 2026 request set as is, `none` for a request refused
 * before it was read (undefined), `other` for anything else — so a caller cannot grow the label's cardinality.
 */
export function methodLabel(method: string | undefined): string {
  if (method === undefined || method === METHOD_NONE) return METHOD_NONE;
  return MODERN_REQUEST_METHODS.has(method) ? method : METHOD_OTHER;
}
