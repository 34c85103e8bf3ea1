// servers.<name>.credentials type: oauth — the gateway as this upstream's OAuth 2.1 client, per caller.
// A caller with a stored token goes out with it (from memory on the hot path); an expired one is
// refreshed without them; a caller with none gets a connect link (URL-mode elicitation when their client
// declared elicitation.url, else a JSON-RPC error carrying the link). The link's flow (connect-routes.ts)
// ends in `complete`, which stores the token for that principal and this server only.
import { expiresSoon } from './token-lifetime.js';
import type { AuthorizationPending, ConnectPending } from './pending.js';
import { codeRequestUrl, codeVerifier, issuerMatches } from './authorization-request.js';
import type { CallerIdentity } from '../../../bridge/upstream.js';
import { ErrorCode, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from '../../../protocol/jsonrpc.js';
import {
  acceptsUrlElicitation,
  CONNECT_REQUIRED,
  connectRequiredData,
  type UrlElicitation,
} from '../../../protocol/connect-link.js';
import type { OAuthSettings } from '../settings.js';
import { type CredentialSource, connectState, type Instead, type Obtained } from '../credential-source.js';
import type { OAuthRecord } from '../record.js';
import type { CredentialStore } from '../store.js';
import {
  InsecureTokenEndpoint,
  redeemCode,
  requestToken,
  TokenEndpointError,
  type TokenClient,
} from '../token-endpoint.js';
import { ClientIdentities } from './client-identity.js';
import { type Discovered, discover, resourceServes } from './discovery.js';

/** The JSON-RPC error code of "connect first" (the URL-elicitation-required code of the 2025-11-25 revision). */
/** What a link's page says about the authorization server is found again after this long. */
const DESTINATION_TTL_MS = 60_000;
/**
 * One refresh per token across replicas: the first to claim it refreshes, the others wait this long at most
 * for its result in the store (then refresh themselves). A rotating refresh token spent twice would be refused.
 */
const REFRESH_CLAIM_MS = 5_000;
const REFRESH_POLL_MS = 50;

export type { AuthorizationPending, ConnectPending } from './pending.js';

export interface OAuthClientOptions {
  server: string;
  url: string;
  settings: OAuthSettings;
  store: CredentialStore;
  /** listen.publicUrl */
  publicUrl: string;
  linkTtlMs: number;
  /** Where the authorization server is found instead of from `url` (a stdio server's configured issuer). */
  discover?: () => Promise<Discovered>;
}

export class OAuthClient implements CredentialSource {
  private readonly refreshing = new Map<string, Promise<Obtained>>();
  private readonly identities: ClientIdentities;
  /** A resource spelled otherwise than the url (a trailing slash) found to be the same. */
  private matchingResource: string | undefined;
  /** Discovery as a link's page last used it (a link preview must not make the gateway discover every time). */
  private described: { at: number; found: Promise<Discovered> } | undefined;

  constructor(readonly options: OAuthClientOptions) {
    this.identities = new ClientIdentities(options.publicUrl);
  }

  get server(): string {
    return this.options.server;
  }

  cached(caller: CallerIdentity): string | undefined {
    const record = this.options.store.cached(caller.principal, this.options.server);
    if (record?.kind !== 'oauth' || expiresSoon(record) || !this.isFor(record)) return undefined;
    return `Bearer ${record.accessToken}`;
  }

  async obtain(caller: CallerIdentity, message: JsonRpcRequest): Promise<Obtained> {
    const stored = await this.options.store.get(caller.principal, this.options.server);
    // A token for another resource (the server's url changed since it was issued) is never sent: connect again.
    const record = stored?.kind === 'oauth' && this.isFor(stored) ? stored : undefined;
    if (record !== undefined && !expiresSoon(record)) return { authorization: `Bearer ${record.accessToken}` };
    if (record !== undefined && record.refreshToken !== undefined) {
      const refreshed = await this.refreshOnce(caller.principal, record);
      if (refreshed) return refreshed;
    }
    return this.connectFirst(caller.principal, message);
  }

  /** The spec: a token goes only to the resource it was issued for. Hot path: compared as text once per resource. */
  private isFor(record: OAuthRecord): boolean {
    if (record.resource === this.options.url || record.resource === this.matchingResource) return true;
    // A token bound to no resource comes only from a configured issuer that binds none (a perCaller stdio server's).
    if (record.resource === '')
      return this.options.discover !== undefined && this.options.settings.resource === undefined;
    if (!resourceServes(record.resource, this.options.url)) return false;
    this.matchingResource = record.resource;
    return true;
  }

  async rejected(caller: CallerIdentity, authorization: string): Promise<void> {
    // The server refused a token we thought good: mark it expired, so the next obtain (the retry's, right
    // after this settles) refreshes or connects.
    const record = await this.options.store.get(caller.principal, this.options.server).catch(() => undefined);
    if (record?.kind === 'oauth' && `Bearer ${record.accessToken}` === authorization)
      await this.options.store
        .put(caller.principal, this.options.server, { ...record, expiresAt: 0 })
        .catch(() => undefined);
  }

  /**
   * The spec's step-up (basic/authorization, Scope Challenge Handling): the server refused the caller's token
   * with 403 insufficient_scope. A link to authorize again asking for the union of what was asked before and
   * what the server asks now; or, when the refused token was already asked for all of that, a refusal that
   * names the scopes: asking again would only loop.
   */
  async stepUp(
    caller: CallerIdentity,
    authorization: string,
    scopes: string[],
    message: JsonRpcRequest,
  ): Promise<Instead> {
    const server = this.options.server;
    const record = await this.options.store.get(caller.principal, server);
    const own = record?.kind === 'oauth' ? record : undefined;
    const before = words(own?.requestedScope ?? own?.scope);
    const wanted = scopes.length ? scopes : [];
    const missing = wanted.filter((scope) => !before.includes(scope));
    const named = wanted.length ? `scope ${wanted.map((s) => `"${s}"`).join(', ')}` : 'a scope it did not name';
    if (
      own !== undefined &&
      `Bearer ${own.accessToken}` === authorization &&
      own.requestedScope !== undefined &&
      missing.length === 0
    ) {
      return {
        refused:
          `Upstream '${server}' refused ${message.method} for want of ${named}, although this caller's token ` +
          `was authorized asking for it: the authorization server did not grant it. Ask whoever runs ${server}'s ` +
          `authorization server to allow it for your account.`,
        data: { reason: 'insufficient_scope', scopes: wanted },
        code: ErrorCode.InternalError,
      };
    }
    if (wanted.length === 0) {
      return {
        refused:
          `Upstream '${server}' refused ${message.method} for want of a scope it did not name (403 ` +
          `insufficient_scope)`,
        data: { reason: 'insufficient_scope' },
      };
    }
    return this.connectFirst(caller.principal, message, [...before, ...missing]);
  }

  /** A connect link for this principal and server: single use, expiring, sealed in the store. */
  async connectLink(principal: string, scopes?: string[]): Promise<string> {
    const pending: ConnectPending = { step: 'connect', principal, server: this.options.server };
    if (scopes !== undefined) pending.scopes = scopes;
    // One live link per principal, server and scopes asked: a second call while it is live gets the same.
    const liveFor = `connect\u0000${principal}\u0000${this.options.server}\u0000${(scopes ?? []).join(' ')}`;
    const id = await this.options.store.putPending(pending, this.options.linkTtlMs, liveFor);
    return `${this.options.publicUrl}/connect/${id}`;
  }

  /**
   * Starts the authorization request for a confirmed link: discovery, client, PKCE; returns where to send the browser.
   */
  async authorizationUrl(principal: string, stepUpScopes?: string[], binding?: string): Promise<string> {
    const found = await this.discover();
    const client = await this.clientFor(found);
    const verifier = codeVerifier();
    const redirectUri = `${this.options.publicUrl}/connect/callback`;
    const pending: AuthorizationPending = {
      step: 'authorize',
      principal,
      server: this.options.server,
      verifier,
      issuer: found.issuer,
      issParameterSupported: found.issParameterSupported,
      tokenEndpoint: found.tokenEndpoint,
      resource: found.resource,
      client,
      redirectUri,
    };
    if (binding !== undefined) pending.binding = binding;
    const scopes = this.scopesFor(found, stepUpScopes);
    pending.scopes = scopes;
    const state = await this.options.store.putPending(pending, this.options.linkTtlMs);
    const url = codeRequestUrl(found.authorizationEndpoint, {
      clientId: client.clientId,
      redirectUri,
      state,
      verifier,
    });
    if (found.resource) url.searchParams.set('resource', found.resource); // none: an issuer that binds no resource
    if (scopes.length) url.searchParams.set('scope', scopes.join(' '));
    return url.href;
  }

  /**
   * What a link's page tells the person: the host of the authorization server they will be sent to and the
   * scopes asked. Discovery is kept a minute for it, so a link preview costs the upstream little.
   */
  async destination(stepUpScopes?: string[]): Promise<{ host: string; scopes: string[] }> {
    if (this.described === undefined || Date.now() - this.described.at > DESTINATION_TTL_MS) {
      const found = this.discover();
      found.catch(() => {
        if (this.described?.found === found) this.described = undefined;
      });
      this.described = { at: Date.now(), found };
    }
    const found = await this.described.found;
    return { host: new URL(found.authorizationEndpoint).host, scopes: this.scopesFor(found, stepUpScopes) };
  }

  private discover(): Promise<Discovered> {
    return this.options.discover?.() ?? discover(this.options.url, this.options.settings.issuer);
  }

  /**
   * The spec's order: the 401's scope, else the resource's scopes_supported (discovery ranks them), else config;
   * a step-up's union instead. offline_access when the authorization server lists it (refresh tokens).
   */
  private scopesFor(found: Discovered, stepUpScopes: string[] | undefined): string[] {
    const scopes = [...(stepUpScopes ?? (found.scopes.length ? found.scopes : this.options.settings.scopes))];
    if (found.offlineAccess && scopes.length && !scopes.includes('offline_access')) scopes.push('offline_access');
    return scopes;
  }

  /** The callback: the code exchanged (with the verifier and the resource) and the token stored for that principal. */
  async complete(pending: AuthorizationPending, code: string, iss: string | undefined): Promise<void> {
    const wrongIssuer = issuerProblem(pending, iss);
    if (wrongIssuer !== undefined) throw new TokenEndpointError(wrongIssuer, 'invalid_issuer');
    const answer = await redeemCode(pending, code, pending.resource);
    const record: OAuthRecord = {
      kind: 'oauth',
      accessToken: answer.accessToken,
      resource: pending.resource,
      issuer: pending.issuer,
      clientId: pending.client.clientId,
      connectedAt: Date.now(),
      issuedAt: Date.now(),
      tokenEndpoint: pending.tokenEndpoint,
      clientSecret: pending.client.clientSecret,
      authMethod: pending.client.authMethod,
    };
    if (answer.refreshToken !== undefined) record.refreshToken = answer.refreshToken;
    if (answer.expiresAt !== undefined) record.expiresAt = answer.expiresAt;
    if (answer.scope !== undefined) record.scope = answer.scope;
    if (pending.scopes !== undefined) record.requestedScope = pending.scopes.join(' ');
    await this.options.store.put(pending.principal, this.options.server, record);
  }

  private refreshOnce(principal: string, record: OAuthRecord): Promise<Obtained | undefined> {
    let flight = this.refreshing.get(principal);
    if (!flight) {
      flight = this.refresh(principal, record).finally(() => this.refreshing.delete(principal)) as Promise<Obtained>;
      this.refreshing.set(principal, flight);
    }
    return flight;
  }

  private async refresh(principal: string, record: OAuthRecord): Promise<Obtained | undefined> {
    const claim = `refresh\u0000${this.options.server}\u0000${principal}\u0000${record.accessToken}`;
    if (!(await this.options.store.claim(claim, REFRESH_CLAIM_MS).catch(() => true))) {
      const theirs = await this.refreshedElsewhere(principal, record.accessToken);
      if (theirs !== 'not yet') return theirs;
    }
    return this.refreshNow(principal, record);
  }

  /**
   * Another process (a replica, or this one a moment ago) claimed this token's refresh: its result, read from
   * the store once it is there; undefined when the connection was dropped meanwhile; 'not yet' past the wait.
   */
  private async refreshedElsewhere(principal: string, spent: string): Promise<Obtained | undefined | 'not yet'> {
    const deadline = Date.now() + REFRESH_CLAIM_MS;
    while (Date.now() < deadline) {
      const stored = await this.options.store.get(principal, this.options.server);
      if (stored?.kind !== 'oauth') return undefined;
      if (stored.accessToken !== spent && !expiresSoon(stored))
        return { authorization: `Bearer ${stored.accessToken}` };
      await new Promise((resolve) => setTimeout(resolve, REFRESH_POLL_MS));
    }
    return 'not yet';
  }

  private async refreshNow(principal: string, record: OAuthRecord): Promise<Obtained | undefined> {
    try {
      const client: TokenClient = {
        clientId: record.clientId,
        clientSecret: record.clientSecret,
        authMethod: record.authMethod ?? 'none',
      };
      const answer = await requestToken(record.tokenEndpoint ?? '', client, {
        grant_type: 'refresh_token',
        refresh_token: record.refreshToken,
        resource: record.resource,
      });
      const next: OAuthRecord = {
        ...record,
        accessToken: answer.accessToken,
        expiresAt: answer.expiresAt,
        issuedAt: Date.now(),
        refreshToken: answer.refreshToken ?? record.refreshToken,
      };
      if (answer.scope !== undefined) next.scope = answer.scope;
      await this.options.store.put(principal, this.options.server, next);
      return { authorization: `Bearer ${next.accessToken}` };
    } catch (error) {
      // A refused refresh token (revoked, expired) means connecting again, and so does a record naming a
      // token endpoint in clear text (stored before discovery refused those: connecting again says why);
      // anything else is said as it is.
      if (
        error instanceof InsecureTokenEndpoint ||
        (error instanceof TokenEndpointError && error.code === 'invalid_grant')
      ) {
        await this.options.store.delete(principal, this.options.server);
        return undefined;
      }
      return {
        refused:
          `servers.${this.options.server}: the caller's token could not be refreshed: ` + `${(error as Error).message}`,
      };
    }
  }

  /** The caller has no token: a link to connect, as URL-mode elicitation or as an error carrying it. */
  private async connectFirst(principal: string, message: JsonRpcRequest, stepUpScopes?: string[]): Promise<Instead> {
    const url = await this.connectLink(principal, stepUpScopes);
    const server = this.options.server;
    const valid = `(single use, valid ${Math.round(this.options.linkTtlMs / 60_000)} min)`;
    const text = stepUpScopes
      ? `${server} needs more access for this call (scope ${stepUpScopes.join(' ')}): open ${url} ${valid} to grant ` +
        `it, then try again.`
      : `Connect your ${server} account to continue: open ${url} ${valid}, then try again.`;
    const elicitation: UrlElicitation = {
      mode: 'url',
      url,
      elicitationId: url.slice(url.lastIndexOf('/') + 1, url.lastIndexOf('/') + 17),
      message: text,
    };
    if (acceptsUrlElicitation(message)) {
      return {
        answer: (id: JsonRpcId): JsonRpcResponse => ({
          jsonrpc: '2.0',
          id,
          result: {
            resultType: 'input_required',
            inputRequests: {
              [`connect-${server}`]: { method: 'elicitation/create', params: elicitation },
            },
            requestState: connectState(server),
          },
        }),
      };
    }
    return { refused: text, data: connectRequiredData(elicitation), code: CONNECT_REQUIRED };
  }

  private clientFor(found: Discovered): Promise<TokenClient> {
    return this.identities.clientAt(found, this.options.settings, `servers.${this.options.server}.credentials`);
  }
}

/**
 * RFC 9207 on the upstream's authorization response (authorization-request.ts issuerMatches), worded for the person.
 */
export function issuerProblem(pending: AuthorizationPending, iss: string | undefined): string | undefined {
  if (issuerMatches(pending, iss)) return undefined;
  return (
    `the authorization response came from ${iss === undefined ? 'an unnamed issuer' : `"${iss}"`}, not ` +
    `${pending.issuer} (RFC 9207); start again from your client`
  );
}

function words(text: string | undefined): string[] {
  return (text ?? '').split(' ').filter(Boolean);
}
