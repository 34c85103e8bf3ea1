// src/edge/: the request path (screen, admit, read, search, route, judge, execute, respond, audit) as a Hono
// app, and what the wiring needs around it: the host check, the tracker of requests in flight, the drain at
// shutdown, the caller-load defaults the config's schema states.
export { createApp } from './app.js';
export type { CatalogView, Edge, EdgeOptions } from './app.js';
export { CALLER_LIMIT_DEFAULTS } from './caller-load.js';
export { writeJson } from './exchange.js';
export { hostChecker } from './host-check.js';
export type { HostCheck } from './host-check.js';
export { HttpDrain } from './http-drain.js';
export { RequestTracker } from './request-tracker.js';
export { screenRequest } from './screen.js';
