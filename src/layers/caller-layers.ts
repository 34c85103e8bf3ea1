// The layers that reach a server as each caller, in one module so that src/layers/index.ts can load them
// together and only when the config uses credentials or per-caller secrets (src/gateway/credentials-loaded.ts).
export { CredentialedUpstream } from './credentialed-upstream.js';
export { OAuthEnv } from './per-caller/oauth-env.js';
export { SecretEnv } from './per-caller/secret-env.js';
export { SecretGate } from './per-caller/secret-gate.js';
