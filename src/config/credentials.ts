// The keys of upstream identity (issue 33): listen.publicUrl, the credentials: store, and a remote
// server's own credentials: (type oauth or tokenExchange), with the checks across keys that say what to
// add when one needs another. config.ts places the schemas; src/credentials/ uses the result.
import { z } from 'zod';
import { isSecureOrLoopback } from '../../protocol/loopback.js';
import { signingKey } from '../../infra/signing-key.js';

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

interface CredentialKeys {
  listen: { publicUrl?: string | undefined };
  credentials?: CredentialStoreConfig | undefined;
  auth?: { jwt?: { issuer: string } | undefined } | undefined;
  servers: Record<
    string,
    {
      transport: string;
      credentials?: ServerCredentials;
      headers?: Record<string, string>;
      baseUrl?: string;
      perCaller?: boolean;
      env?: Record<string, string>;
      secrets?: unknown;
    }
  >;
}

/** What the servers' credentials need from the rest of the file, each as the fix to make. */
export function credentialProblems(config: CredentialKeys): string[] {
  const problems: string[] = [];
  for (const [name, server] of Object.entries(config.servers))
    if (server.credentials) problems.push(...serverProblems(name, server, server.credentials, config));
  problems.push(...linkProblems(config), ...signInProblems(config.credentials?.signIn));
  return problems;
}

type ServerKeys = CredentialKeys['servers'][string];

/** One server's credentials against its kind and the rest of the file. */
function serverProblems(
  name: string,
  server: ServerKeys,
  credentials: ServerCredentials,
  config: CredentialKeys,
): string[] {
  const problems: string[] = [];
  const at = `servers.${name}.credentials`;
  if (Object.keys(server.headers ?? {}).some((header) => header.toLowerCase() === 'authorization')) {
    const whose = credentials.type === 'clientCredentials' ? 'its own token' : "each caller's own Authorization";
    problems.push(`${at}: the gateway sends ${whose} to this server; remove servers.${name}.headers.Authorization`);
  }
  if (credentials.type === 'clientCredentials')
    return [...problems, ...serviceIdentityProblems(name, server.transport, credentials)];
  if (credentials.type === 'tokenExchange' && credentials.idJag && server.transport !== 'http')
    problems.push(
      `${at}.idJag: the ID-JAG's authorization server is found from a remote MCP server's metadata (url:), which ` +
        `this server has none of; remove idJag, or use it on a url: server`,
    );
  if (
    server.transport === 'openapi' &&
    credentials.type === 'tokenExchange' &&
    !credentials.audience &&
    !server.baseUrl
  )
    problems.push(
      `${at}.audience: name the REST API the tokens are for, or set servers.${name}.baseUrl (asked for then)`,
    );
  if (server.transport === 'stdio') {
    problems.push(...childTokenProblems(name, server, config));
    if (credentials.type === 'tokenExchange') return problems;
  } else if (server.transport === 'openapi' && credentials.type === 'oauth') {
    problems.push(...restTokenProblems(name, server.baseUrl, credentials));
  } else if (credentials.type === 'oauth') {
    for (const key of ['env', 'resource'] as const) {
      if (credentials[key] !== undefined)
        problems.push(
          `${at}.${key}: a remote server names its own resource (its 401 and metadata); ${key} is for a perCaller ` +
            `stdio server${key === 'resource' ? ' or an openapi: server' : ''}, so remove it`,
        );
    }
  }
  if (credentials.type === 'tokenExchange') return [...problems, ...tokenExchangeProblems(at, credentials, config)];
  return [...problems, ...oauthProblems(at, credentials, config)];
}

function tokenExchangeProblems(at: string, credentials: TokenExchangeCredentials, config: CredentialKeys): string[] {
  const problems: string[] = [];
  if (!config.auth?.jwt) {
    problems.push(
      `${at}: type tokenExchange trades the caller's verified JWT for one for this server; configure auth.jwt ` +
        `(callers with API keys have no token to exchange)`,
    );
  }
  if (credentials.authMethod !== 'none' && credentials.clientSecret === undefined) {
    problems.push(
      `${at}.clientSecret: ${credentials.authMethod} needs the client's secret (e.g. "\${GW_SECRET}"), or set ` +
        `authMethod: none for a public client`,
    );
  }
  if (credentials.idJag && credentials.audience !== undefined) {
    problems.push(
      `${at}.audience: with idJag the ID-JAG's audience is the upstream's authorization server; remove audience ` +
        `(set idJag.issuer to name that server)`,
    );
  }
  return problems;
}

/** type: oauth, each person's own token: a store to keep it in, a public URL to connect at, a whole client. */
function oauthProblems(at: string, credentials: OAuthCredentials, config: CredentialKeys): string[] {
  const problems: string[] = [];
  if (!config.credentials) {
    problems.push(
      `${at}: type oauth keeps each caller's tokens encrypted; add  credentials: { key: \${CREDENTIALS_KEY} }  ` +
        `(openssl rand -base64 32)`,
    );
  }
  if (config.listen.publicUrl === undefined) {
    problems.push(
      `${at}: type oauth sends callers to a connect link and the authorization server back to a callback; set ` +
        `listen.publicUrl to the gateway's URL as a browser reaches it`,
    );
  }
  if (credentials.clientSecret !== undefined && credentials.clientId === undefined) {
    problems.push(`${at}.clientSecret: give the clientId it belongs to, or remove it`);
  }
  if (
    credentials.authMethod !== undefined &&
    credentials.authMethod !== 'none' &&
    credentials.clientSecret === undefined
  ) {
    problems.push(
      `${at}.authMethod: ${credentials.authMethod} needs clientSecret; set authMethod: none for a public client`,
    );
  }
  return problems;
}

/** Where connect links send browsers and codes: https (or loopback) for the callback and the sign-in issuer. */
function linkProblems(config: CredentialKeys): string[] {
  const problems: string[] = [];
  const redirected = Object.values(config.servers).some((server) => server.credentials?.type === 'oauth');
  const { publicUrl } = config.listen;
  // The spec: "All redirect URIs MUST be either localhost or use HTTPS"; an authorization code is as good as a token.
  if (redirected && publicUrl !== undefined && !isSecureOrLoopback(publicUrl)) {
    problems.push(
      `listen.publicUrl: authorization servers send codes back to ${publicUrl}/connect/callback, and MCP requires a ` +
        `redirect URI to be https (or localhost); give the https:// URL browsers reach the gateway at`,
    );
  }
  // With auth.jwt, whoever opens a connect link signs in at its issuer first (src/credentials/oauth/sign-in.ts).
  const issuer = config.auth?.jwt?.issuer;
  const linksMade = Object.values(config.servers).some(
    (server) => server.credentials?.type === 'oauth' || (server.perCaller === true && server.secrets !== undefined),
  );
  if (linksMade && config.credentials && publicUrl !== undefined && issuer !== undefined && inClearText(issuer)) {
    problems.push(
      `auth.jwt.issuer: a person opening a connect link signs in at ${issuer} first, and MCP requires https for ` +
        `every authorization server endpoint (plain http only on loopback); give the issuer's https:// URL`,
    );
  }
  return problems;
}

function signInProblems(signInClient: CredentialStoreConfig['signIn'] | undefined): string[] {
  const problems: string[] = [];
  if (signInClient?.clientSecret !== undefined && signInClient.clientId === undefined) {
    problems.push('credentials.signIn.clientSecret: give the clientId it belongs to, or remove it');
  }
  if (
    signInClient?.authMethod !== undefined &&
    signInClient.authMethod !== 'none' &&
    signInClient.clientSecret === undefined
  ) {
    problems.push(
      `credentials.signIn.authMethod: ${signInClient.authMethod} needs clientSecret; set authMethod: none for a ` +
        `public client`,
    );
  }
  return problems;
}

/**
 * type: clientCredentials, the gateway's own identity: a secret or a key (one), a key it can sign with, and a
 * server it can ask for a token for (a REST API or a child sends no 401 to discover the token endpoint from).
 */
function serviceIdentityProblems(name: string, transport: string, credentials: ClientCredentials): string[] {
  const at = `servers.${name}.credentials`;
  if (transport === 'stdio' || transport === 'sse') {
    return [
      `${at}: type clientCredentials sends the gateway's own token to a remote server (url:) or a REST API ` +
        `(openapi:); for ${transport === 'stdio' ? 'a stdio server, hand the child its secret in env:' : 'an HTTP+SSE server, use headers:'}`,
    ];
  }
  const problems: string[] = [];
  const { clientSecret, privateKey, authMethod, algorithm } = credentials;
  if (clientSecret === undefined && privateKey === undefined) {
    problems.push(
      `${at}: give clientSecret (e.g. "\${CLIENT_SECRET}") or privateKey (a PEM key, e.g. ` +
        `"\${file:/run/secrets/gateway-key.pem}") to authenticate the client with`,
    );
  }
  if (clientSecret !== undefined && privateKey !== undefined) {
    problems.push(
      `${at}: give clientSecret or privateKey, not both (privateKey signs an assertion instead of a secret)`,
    );
  }
  if (privateKey !== undefined) {
    const key = signingKey(privateKey, algorithm);
    if ('problem' in key) problems.push(`${at}.${key.wrong}: it ${key.problem}`);
  } else if (algorithm !== undefined) {
    problems.push(`${at}.algorithm: it is the algorithm privateKey signs with; give privateKey, or remove it`);
  }
  if (authMethod === 'private_key_jwt' && privateKey === undefined) {
    problems.push(`${at}.authMethod: private_key_jwt signs with privateKey; give it, or use client_secret_basic`);
  }
  if (authMethod !== undefined && authMethod !== 'private_key_jwt' && clientSecret === undefined) {
    problems.push(
      `${at}.authMethod: ${authMethod} sends clientSecret; give it, or use private_key_jwt with privateKey`,
    );
  }
  if (transport === 'openapi' && credentials.tokenEndpoint === undefined) {
    problems.push(
      `${at}.tokenEndpoint: a REST API sends no 401 to discover its authorization server from; give the token ` +
        `endpoint the client is registered at (e.g. tokenEndpoint: "https://login.example.com/oauth/token")`,
    );
  }
  return problems;
}

/**
 * An http:// URL of another machine (an issuer that is no URL at all has no metadata to sign in with, and is left
 * alone).
 */
function inClearText(url: string): boolean {
  return /^http:/i.test(url) && !isSecureOrLoopback(url);
}

/**
 * An openapi: server's type oauth: a REST API sends no 401 challenge and publishes no protected resource metadata,
 * so the config names the authorization server, and the tokens are for the API's base URL (RFC 8707).
 */
function restTokenProblems(name: string, baseUrl: string | undefined, credentials: OAuthCredentials): string[] {
  const at = `servers.${name}.credentials`;
  const problems: string[] = [];
  if (credentials.issuer === undefined) {
    problems.push(
      `${at}.issuer: a REST API sends no 401 to discover its authorization server from; give the issuer URL of ` +
        `the server its tokens come from (e.g. issuer: "https://login.example.com")`,
    );
  }
  if (credentials.resource === undefined && baseUrl === undefined) {
    problems.push(
      `${at}: the tokens are asked for the REST API's base URL (RFC 8707 resource); set servers.${name}.baseUrl, ` +
        `or ${at}.resource`,
    );
  }
  if (credentials.env !== undefined) {
    problems.push(
      `${at}.env: the token goes to the REST API as Authorization; env is for a perCaller stdio server, so remove it`,
    );
  }
  return problems;
}

/** A stdio server's credentials: the caller's OAuth token put into their own child's environment (issue 34). */
function childTokenProblems(name: string, server: CredentialKeys['servers'][string], config: CredentialKeys): string[] {
  const at = `servers.${name}.credentials`;
  const credentials = server.credentials!;
  if (credentials.type !== 'oauth') {
    return [
      `${at}: a stdio server takes each caller's token into its child's environment with type: oauth (and env:, ` +
        `issuer:); tokenExchange is for remote servers`,
    ];
  }
  const problems: string[] = [];
  if (!server.perCaller)
    problems.push(`${at}: each caller's token goes into a child of their own; add servers.${name}.perCaller: true`);
  if (credentials.env === undefined)
    problems.push(`${at}.env: name the environment variable the child reads the token from, e.g. env: GITHUB_TOKEN`);
  if (credentials.issuer === undefined) {
    problems.push(
      `${at}.issuer: a child sends no 401 to discover its authorization server from; give the server's issuer URL ` +
        `(e.g. issuer: "https://idp.example.com"), and resource: when it binds tokens to one`,
    );
  }
  if (!config.auth)
    problems.push(
      `${at}: a token is kept per caller, and without auth: every caller is "anonymous"; configure auth (apiKeys ` +
        `or jwt)`,
    );
  if (server.secrets !== undefined)
    problems.push(
      `${at}: servers.${name} takes its callers' values either from secrets: or from an OAuth token; keep one`,
    );
  if (credentials.env !== undefined && server.env && Object.hasOwn(server.env, credentials.env))
    problems.push(
      `${at}.env: ${credentials.env} is also set in servers.${name}.env; each caller's own token replaces it, so ` +
        `remove it from env`,
    );
  return problems;
}
