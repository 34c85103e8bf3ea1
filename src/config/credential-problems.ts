// The checks across keys for upstream identity (credentials.ts holds the schemas): what one server's credentials:
// need from the rest of the file (a store, listen.publicUrl, auth.jwt, a client secret), each said as the fix to
// make. Run by config.ts after the schemas have passed.
import { isSecureOrLoopback } from '../../protocol/loopback.js';
import { signingKey } from '../../infra/signing-key.js';
import type {
  ClientCredentials,
  CredentialStoreConfig,
  OAuthCredentials,
  ServerCredentials,
  TokenExchangeCredentials,
} from './credentials.js';

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
        `(openapi:); for ` +
        (transport === 'stdio'
          ? 'a stdio server, hand the child its secret in env:'
          : 'an HTTP+SSE server, use headers:'),
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
