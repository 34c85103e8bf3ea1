// The settings the credentials are handed, as types of their own: "credentials are handed plain config".
// The config's zod types (src/config/credentials.ts) satisfy these structurally, and the wiring
// (src/gateway/upstream-credentials.ts) hands those over; nothing in src/credentials/ reads the config.

/** How the gateway authenticates itself at a token endpoint. */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** servers.<name>.credentials with type: oauth — the gateway as the upstream's OAuth 2.1 client, per caller. */
export interface OAuthSettings {
  type: 'oauth';
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  authMethod?: ClientAuthMethod | undefined;
  scopes: string[];
  env?: string | undefined;
  issuer?: string | undefined;
  resource?: string | undefined;
}

/** servers.<name>.credentials with type: tokenExchange — RFC 8693. */
export interface TokenExchangeSettings {
  type: 'tokenExchange';
  tokenEndpoint: string;
  clientId: string;
  clientSecret?: string | undefined;
  authMethod: ClientAuthMethod;
  audience?: string | undefined;
  resource?: string | undefined;
  scopes: string[];
  renewBeforeMs: number;
}
