// src/layers/: what wraps an upstream: the per-server stack (stack.ts states its order) and its layers. What
// other folders use at start: the stack and its types. The layers that reach a server as each caller
// (credentials, per-caller children) are loaded only when the config uses them, through the two loaders below.
export { ANONYMOUS } from './cached-upstream.js';
export type { LimitedUpstream, LoadSnapshot } from './limits/limited-upstream.js';
export type { ChildEnvSource } from './per-caller/per-caller-upstream.js';
export type { CallerEnv } from './per-caller/secret-gate.js';
export { buildServerStack, uncachedOf } from './stack.js';
export type { CallerLayers, ServedUpstream } from './stack.js';

/** The layers a caller's own credential or secrets bring (caller-layers.ts), loaded with the credentials. */
export const loadCallerLayers = () => import('./caller-layers.js');
/** A per-caller server's children (per-caller/per-caller-factory.ts), loaded for a `perCaller` server. */
export const loadPerCallerFactory = () => import('./per-caller/per-caller-factory.js');
