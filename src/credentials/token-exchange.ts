// servers.<name>.credentials type: tokenExchange (RFC 8693): the caller's verified JWT is traded at the
// authorization server for a token whose audience is this upstream, kept per caller in this process until
// renewBeforeMs before it expires. One exchange at a time per caller; callers waiting for it share it.
// With idJag (enterprise-managed authorization, ext-auth SEP-990) the caller's JWT is their ID token at the enterprise
// IdP: traded there for an ID-JAG whose audience is the upstream's authorization server, which then gives the
// upstream's token for it (oauth/id-jag.ts). Each caller gets their own, cached as any exchanged token is.
import type { CallerIdentity } from '../../bridge/upstream.js';
import type { TokenExchangeSettings } from './settings.js';
import type { CredentialSource, Obtained } from './credential-source.js';
import { requestToken, type TokenAnswer, TokenEndpointError } from './token-endpoint.js';
import { DiscoveryError } from './oauth/discovery.js';
import { ID_JAG, IdJagGrant } from './oauth/id-jag.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
/** Without expires_in, an exchanged token is used this long. */
const DEFAULT_LIFETIME_MS = 300_000;
/** Exchanged tokens kept at most (one per caller); the oldest go first. */
const MAX_CACHED = 10_000;

interface Exchanged {
  authorization: string;
  /** Epoch ms from which it is exchanged again. */
  renewAt: number;
  /** The caller's token it was exchanged for: a caller who comes with another token gets a fresh exchange. */
  subject: string;
}

export class TokenExchanger implements CredentialSource {
  private readonly tokens = new Map<string, Exchanged>();
  private readonly flights = new Map<string, Promise<Obtained>>();
  private readonly grant: IdJagGrant | undefined;

  constructor(
    private readonly server: string,
    private readonly settings: TokenExchangeSettings,
    /** The upstream's URL, the resource asked for when no audience is configured. */
    private readonly url: string,
  ) {
    if (settings.idJag) this.grant = new IdJagGrant(server, settings.idJag, url);
  }

  cached(caller: CallerIdentity): string | undefined {
    const held = this.tokens.get(caller.principal);
    if (held === undefined || held.subject !== caller.token || Date.now() >= held.renewAt) return undefined;
    return held.authorization;
  }

  obtain(caller: CallerIdentity): Promise<Obtained> {
    if (caller.token === undefined) {
      return Promise.resolve({
        refused:
          `servers.${this.server} reaches the server as each caller through token exchange, which needs the ` +
          `caller's JWT (auth.jwt); this caller authenticated otherwise`,
      });
    }
    const key = caller.principal;
    let flight = this.flights.get(key);
    if (!flight) {
      flight = this.exchange(caller.principal, caller.token).finally(() => this.flights.delete(key));
      this.flights.set(key, flight);
    }
    return flight;
  }

  /** The upstream refused this caller's token: exchange again next time. */
  rejected(caller: CallerIdentity, authorization: string): void {
    if (this.tokens.get(caller.principal)?.authorization === authorization) this.tokens.delete(caller.principal);
  }

  private async exchange(principal: string, subject: string): Promise<Obtained> {
    const settings = this.settings;
    try {
      const answer = this.grant
        ? await this.throughIdJag(this.grant, subject)
        : await requestToken(settings.tokenEndpoint, settings, {
            grant_type: GRANT,
            subject_token: subject,
            subject_token_type: ACCESS_TOKEN,
            requested_token_type: ACCESS_TOKEN,
            audience: settings.audience,
            resource: settings.resource ?? (settings.audience === undefined ? this.url : undefined),
            scope: settings.scopes.length ? settings.scopes.join(' ') : undefined,
          });
      const lifetime = (answer.expiresAt ?? Date.now() + DEFAULT_LIFETIME_MS) - Date.now();
      const authorization = `Bearer ${answer.accessToken}`;
      this.tokens.delete(principal);
      this.tokens.set(principal, {
        authorization,
        subject,
        renewAt: Date.now() + Math.max(0, lifetime - settings.renewBeforeMs),
      });
      if (this.tokens.size > MAX_CACHED) this.tokens.delete(this.tokens.keys().next().value!);
      return { authorization };
    } catch (error) {
      const said =
        error instanceof TokenEndpointError || error instanceof DiscoveryError ? error.message : String(error);
      return {
        refused:
          `servers.${this.server}: the caller's token could not be exchanged for one for this server: ` +
          `${said}; check servers.${this.server}.credentials`,
      };
    }
  }

  /**
   * The ID token traded at the IdP for an ID-JAG naming the upstream's authorization server as its audience, and the
   * ID-JAG presented there (only there) for the upstream's token.
   */
  private async throughIdJag(grant: IdJagGrant, idToken: string): Promise<TokenAnswer> {
    const settings = this.settings;
    const site = await grant.grantSite();
    const jag = await requestToken(settings.tokenEndpoint, settings, {
      grant_type: GRANT,
      subject_token: idToken,
      subject_token_type: ID_TOKEN,
      requested_token_type: ID_JAG,
      audience: site.issuer,
      resource: settings.resource ?? site.resource,
      scope: settings.scopes.length ? settings.scopes.join(' ') : undefined,
    });
    // An IdP that answers with some other kind of token has not issued a grant: nothing goes on to the upstream.
    if (jag.issuedTokenType !== ID_JAG) {
      throw new TokenEndpointError(
        `the IdP at ${settings.tokenEndpoint} answered with ${jag.issuedTokenType ?? 'no issued_token_type'}, not ` +
          `an ID-JAG (${ID_JAG}): it does not do enterprise-managed authorization for this client`,
        undefined,
      );
    }
    try {
      return await grant.redeem(jag.accessToken, site, settings.scopes);
    } catch (error) {
      if (error instanceof TokenEndpointError)
        throw new TokenEndpointError(
          `the authorization server ${site.issuer} refused the ID-JAG: ${error.message}`,
          error.code,
        );
      throw error;
    }
  }
}
