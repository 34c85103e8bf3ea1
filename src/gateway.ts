// The gateway's public entry: start one from a validated config. Building it, reloading it and closing it
// live in src/gateway/.
export { startGateway } from './gateway/index.js';
export type { RunningGateway } from './gateway/index.js';
