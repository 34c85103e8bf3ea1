// src/aggregate/: /mcp, many upstreams behind one endpoint: the aggregator (lists fanned out and merged,
// namespaced names), the router that places a named request, and the placeholder a caller sees for a server
// they must connect first.
export { Aggregator } from './aggregator.js';
export { placeholderAnswer } from './connect-placeholder.js';
export type { CallerConnections } from './connect-placeholder.js';
export { placed } from './router.js';
export type { ListReader, Router } from './router.js';
