// src/gateway/: the wiring: builds every part from the config, starts serving, reloads and closes. Only
// src/gateway.ts imports it.
export { startGateway } from './build.js';
export type { RunningGateway } from './running.js';
