// src/credentials/: each caller's own upstream credential: the sealed store (file or Redis), the OAuth client
// and the gateway's sign-in, token exchange, client credentials, and the connect and paste pages. Nothing
// loaded at start imports a value of it: the wiring loads it (src/gateway/credentials-loaded.ts, with import())
// when the config uses credentials, and then all of this face at once, as before it had faces.
export { addConnectRoutes } from './connect-routes.js';
export { connectState } from './credential-source.js';
export type { CredentialSource, Instead, Obtained } from './credential-source.js';
export { ClientCredentialsSource } from './oauth/client-credentials.js';
export { redirectUris } from './oauth/client-identity.js';
export { bearerParameters } from './oauth/discovery.js';
export { discoverIssuer } from './oauth/issuer-discovery.js';
export { OAuthClient } from './oauth/oauth-client.js';
export { GatewaySignIn } from './oauth/sign-in.js';
export type { SecretPending, SecretRecord } from './record.js';
export { addSecretRoutes } from './secret-routes.js';
export { openCredentialStore } from './store.js';
export type { CredentialStore } from './store.js';
export { TokenExchanger } from './token-exchange.js';
