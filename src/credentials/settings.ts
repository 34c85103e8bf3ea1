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
  /**
   * Enterprise-managed authorization (ext-auth, SEP-990): the caller's JWT is their ID token at the enterprise IdP
   * (tokenEndpoint), traded there for an ID-JAG, which the upstream's authorization server takes as a jwt-bearer grant.
   */
  idJag?: IdJagSettings | undefined;
}

/** The gateway's client at the upstream's authorization server, where the ID-JAG is presented (RFC 7523). */
export interface IdJagSettings {
  clientId: string;
  clientSecret: string;
  authMethod: 'client_secret_basic' | 'client_secret_post';
  /** The upstream's authorization server (the ID-JAG's audience); left out, discovered from the upstream. */
  issuer?: string | undefined;
}

/** How the gateway proves itself in a client_credentials request: a shared secret, or a key it signs with. */
export type ServiceAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';

/**
 * servers.<name>.credentials with type: clientCredentials — the gateway's own service identity at the upstream's
 * authorization server (OAuth client_credentials, the ext-auth extension): one token, shared by every caller.
 */
export interface ClientCredentialsSettings {
  type: 'clientCredentials';
  clientId: string;
  clientSecret?: string | undefined;
  /** A PEM private key: the client authenticates with a signed assertion (RFC 7523 §2.2) instead of a secret. */
  privateKey?: string | undefined;
  /** The JWS algorithm of the assertion; left out, the one the key's type implies. */
  algorithm?: string | undefined;
  /** Left out: private_key_jwt with a privateKey; with a secret, what the authorization server offers. */
  authMethod?: ServiceAuthMethod | undefined;
  /** Where tokens are asked for, instead of discovering it from the upstream's 401 and metadata. */
  tokenEndpoint?: string | undefined;
  /** The authorization server the client is registered at: its credentials go to no other. */
  issuer?: string | undefined;
  /** The resource the tokens are for (RFC 8707); the upstream's URL when left out. */
  resource?: string | undefined;
  scopes: string[];
}
