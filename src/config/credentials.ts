// The keys of upstream identity (issue 33): listen.publicUrl, the credentials: store, and a server's own
// credentials: (type oauth, tokenExchange or clientCredentials). config.ts places the schemas; the checks across
// keys that say what to add when one needs another are in credential-problems.ts; src/credentials/ uses the result.
import { z } from 'zod';
import { isSecureOrLoopback } from '../../protocol/loopback.js';

// abort: a value that is no URL is told so once, not also that it is no https URL.
const httpUrl = (error: string) => z.url({ protocol: /^https?$/, error, abort: true });
/** An authorization server endpoint: the spec wants every one over https; plain http only on this machine. */
const endpointUrl = (error: string) =>
  httpUrl(error).refine(
    isSecureOrLoopback,
    'an authorization server endpoint must use https (MCP requires it; plain http is allowed only on loopback)',
  );
const scope = z
  .string()
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'a scope is printable ASCII without spaces, quotes or backslashes');
const positiveInt = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
  z.number().int().positive(),
);

/** The shortest credentials.key accepted: AES-256 takes 32 bytes, and a key derived from fewer is guessable. */
export const MIN_KEY_BYTES = 32;
/** The longest a connect link may live (the URL-elicitation rules: a link expires, and soon). */
export const MAX_LINK_TTL_MS = 600_000;

/** listen.publicUrl: the gateway as a person's browser reaches it; connect links and OAuth callbacks are under it. */
export const publicUrl = z
  .url({
    protocol: /^https?$/,
    error: 'give the gateway\'s URL as a browser reaches it, e.g. "https://gw.example.com"',
    abort: true,
  })
  // Links and callbacks are paths under it: a query or fragment would end up in the middle of each (and a
  // redirect URI may carry no fragment, RFC 6749 §3.1.2).
  .refine((url) => {
    const parsed = new URL(url);
    return parsed.search === '' && parsed.hash === '';
  }, 'links and OAuth callbacks go under this URL: give it without a ?query or #fragment, e.g. ' +
    '"https://gw.example.com"')
  // The connect and paste pages, their callbacks and their cookies (scoped to the root: `__Host-` cookies must
  // be) live at the gateway's root; under a path a proxy would have to rewrite every one of them.
  .refine(
    (url) => new URL(url).pathname === '/',
    'the connect pages, OAuth callbacks and their cookies live at the root of the gateway: give its URL without a ' +
      'path, e.g. "https://gw.example.com" (behind a proxy, give the gateway a host of its own)',
  )
  // As URL writes it (scheme and host in lower case, so https:// is recognised however it was typed), without a
  // trailing slash.
  .transform((url) => {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  })
  .optional();

/** How the gateway authenticates itself at a token endpoint (RFC 6749 §2.3, OAuth 2.1 client auth). */
const authMethod = z.enum(['client_secret_basic', 'client_secret_post', 'none']);

/** credentials.signIn: the gateway's client at auth.jwt.issuer, where a connect link's person signs in. */
const signIn = z
  .strictObject({
    /**
     * Pre-registered at the issuer with redirect URI <publicUrl>/connect/signed-in; left out, a Client ID Metadata
     * Document or dynamic registration.
     */
    clientId: z.string().min(1).optional(),
    clientSecret: z.string().min(1).optional(),
    authMethod: authMethod.optional(),
    /** Must bring the claim auth.jwt.principalClaim names into the ID token. */
    scopes: z
      .array(scope)
      .min(1, 'give at least openid: the ID token that names the person comes with it')
      .default(['openid']),
  })
  .prefault({});

/** credentials: where per-user upstream credentials are kept, encrypted with `key` (src/credentials/). */
export const credentialStore = z
  .strictObject({
    /** Encrypts every stored credential (AES-256-GCM under a key derived from this). The same on every replica. */
    key: z.string().refine((key) => Buffer.byteLength(key, 'utf8') >= MIN_KEY_BYTES, {
      error:
        `credentials.key must be at least ${MIN_KEY_BYTES} bytes; generate one with  openssl rand -base64 32  ` +
        `and pass it as \${CREDENTIALS_KEY}`,
    }),
    /** file: this gateway only (survives restarts); redis: cache.url, shared by every replica. */
    store: z.enum(['file', 'redis']).default('file'),
    /** For store: file; relative to the config file's folder. */
    file: z.string().min(1).default('credentials.json'),
    /** How long a connect link may be used; at most 10 minutes. */
    linkTtlMs: positiveInt
      .pipe(z.number().max(MAX_LINK_TTL_MS, 'a connect link lives at most 600000 ms (10 minutes)'))
      .default(MAX_LINK_TTL_MS),
    /**
     * With auth.jwt: the person opening a connect link signs in at its issuer first, and must be the link's principal.
     */
    signIn,
  })
  .optional();

/** servers.<name>.credentials with type: oauth — the gateway as the upstream's OAuth 2.1 client, per caller. */
const oauthCredentials = z.strictObject({
  type: z.literal('oauth'),
  /** A pre-registered client; left out, a Client ID Metadata Document or dynamic registration. */
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  /** Left out: the first of client_secret_basic, client_secret_post the server offers (none without a secret). */
  authMethod: authMethod.optional(),
  /** Used when neither the upstream's 401 nor its metadata names scopes. */
  scopes: z.array(scope).default([]),
  /**
   * A perCaller stdio server only: the environment variable its caller's child reads the token from. A child
   * sends no 401 to discover from, so it also names the authorization server (`issuer`) and, when that
   * server binds tokens to one (RFC 8707), the `resource` they are for.
   */
  env: z
    .string()
    .regex(
      /^[A-Za-z_][A-Za-z0-9_]*$/,
      'name the environment variable the child reads its token from, e.g. GITHUB_TOKEN',
    )
    .optional(),
  /**
   * The authorization server (its issuer): for a remote server, the one clientId was registered at (the
   * client's credentials go to no other); for a perCaller stdio server or an openapi: server (neither sends a
   * 401 to discover it from), where its tokens come from.
   */
  issuer: endpointUrl(
    "give the authorization server's issuer URL (its metadata is at <issuer>/.well-known/…), e.g. " +
      '"https://github.com/login/oauth"',
  ).optional(),
  /**
   * The resource the tokens are for (RFC 8707): a perCaller stdio server's (none when left out); an openapi:
   * server's (its baseUrl when left out).
   */
  resource: httpUrl(
    'give the resource the tokens are for as an http:// or https:// URL, e.g. "https://api.github.com"',
  ).optional(),
});

/**
 * servers.<name>.credentials with type: tokenExchange — RFC 8693: the caller's JWT traded for one for this upstream.
 */
const tokenExchangeCredentials = z.strictObject({
  type: z.literal('tokenExchange'),
  tokenEndpoint: endpointUrl(
    'give the token endpoint of the authorization server that exchanges tokens, an https:// URL',
  ),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1).optional(),
  authMethod: authMethod.default('client_secret_basic'),
  /** The audience the exchanged token is for (RFC 8693 `audience`). */
  audience: z.string().min(1).optional(),
  /** The upstream as a resource (RFC 8707 `resource`); defaults to the server's url when no audience is given. */
  resource: httpUrl('give the resource as an http:// or https:// URL').optional(),
  scopes: z.array(scope).default([]),
  /** An exchanged token is used until this long before it expires, then exchanged again. */
  renewBeforeMs: positiveInt.default(30_000),
  /**
   * Enterprise-managed authorization (ext-auth, SEP-990): tokenEndpoint is the enterprise IdP's, the caller's JWT their
   * ID token there, traded for an ID-JAG that this client presents at the upstream's authorization server.
   */
  idJag: z
    .strictObject({
      /** The gateway's client at the upstream's authorization server (pre-registered there). */
      clientId: z.string().min(1, "give the client id the upstream's authorization server registered for the gateway"),
      clientSecret: z.string().min(1, 'give that client\'s secret, e.g. "${XAA_SECRET}"'),
      authMethod: z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
      /** The upstream's authorization server (the ID-JAG's audience); left out, the one its metadata names. */
      issuer: endpointUrl(
        'give the upstream\'s authorization server issuer URL, e.g. "https://auth.crm.example.com"',
      ).optional(),
    })
    .optional(),
});

/**
 * servers.<name>.credentials with type: clientCredentials — the gateway's own service identity at the upstream's
 * authorization server (OAuth client_credentials, the ext-auth extension): one token, shared by every caller.
 */
const clientCredentials = z.strictObject({
  type: z.literal('clientCredentials'),
  /** Registered at the authorization server beforehand: this grant has no dynamic registration. */
  clientId: z.string().min(1, 'give the client id the authorization server registered for the gateway'),
  /** One of the two: a secret, or a PEM private key the client signs an assertion with (RFC 7523). */
  clientSecret: z.string().min(1).optional(),
  privateKey: z.string().min(1).optional(),
  /** The assertion's JWS algorithm; left out, the one the key's type implies (RS256, ES256, EdDSA, …). */
  algorithm: z
    .string()
    .regex(/^(RS|PS|ES)(256|384|512)$|^EdDSA$/, 'an algorithm is RS256, PS256, ES256 (…384, …512) or EdDSA')
    .optional(),
  /** Left out: private_key_jwt with privateKey; with clientSecret, basic unless the server offers only post. */
  authMethod: z.enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt']).optional(),
  /** Where tokens are asked for; left out, discovered from the server's 401 and metadata. */
  tokenEndpoint: endpointUrl(
    'give the token endpoint of the authorization server the client is registered at, an https:// URL',
  ).optional(),
  /** The authorization server the client is registered at (its issuer): the client's credentials go to no other. */
  issuer: endpointUrl(
    "give the authorization server's issuer URL (its metadata is at <issuer>/.well-known/…), e.g. " +
      '"https://login.example.com"',
  ).optional(),
  /** The resource the tokens are for (RFC 8707); the server's url (an openapi: server's baseUrl) when left out. */
  resource: httpUrl(
    'give the resource the tokens are for as an http:// or https:// URL, e.g. "https://api.example.com"',
  ).optional(),
  /** Asked for always; left out, the server's 401 or metadata scopes, else none. */
  scopes: z.array(scope).default([]),
});

export const serverCredentials = z.discriminatedUnion(
  'type',
  [oauthCredentials, tokenExchangeCredentials, clientCredentials],
  {
    error:
      'credentials.type must be "oauth" (each caller connects their own account), "tokenExchange" (RFC 8693, needs ' +
      'auth.jwt) or "clientCredentials" (the gateway\'s own service identity, shared by every caller)',
  },
);

export type CredentialStoreConfig = NonNullable<z.infer<typeof credentialStore>>;
export type ServerCredentials = z.infer<typeof serverCredentials>;
export type OAuthCredentials = Extract<ServerCredentials, { type: 'oauth' }>;
export type TokenExchangeCredentials = Extract<ServerCredentials, { type: 'tokenExchange' }>;
export type ClientCredentials = Extract<ServerCredentials, { type: 'clientCredentials' }>;
