// bridge/sandbox/: a stdio child in a bubblewrap sandbox (its own namespaces, seccomp, an egress proxy). What
// other folders use: the policy's type, the refusal counts /metrics shows (small, always loaded), and two
// loaders, so the sandbox itself and the probe of what this host allows load only when a server is sandboxed
// or the status page asks.
export type { SandboxPolicy } from './policy.js';
export { sandboxRefusals } from './refusals.js';

/** sandbox.ts: a sandboxed child's launch and the checks a reload makes of a sandboxed server. */
export const loadSandbox = () => import('./sandbox.js');
/** probe.ts: which sandbox tier this host supports, for the status page. */
export const loadSandboxProbe = () => import('./probe.js');
