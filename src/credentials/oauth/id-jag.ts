// The upstream's half of enterprise-managed authorization (the MCP ext-auth extension, SEP-990): where an ID-JAG
// (Identity Assertion JWT Authorization Grant, issued by the enterprise IdP) is presented, and the presenting. The
// ID-JAG names one authorization server as its audience and goes to that one only: the configured issuer, else the
// one the upstream's metadata names first, kept from then on (a resource that starts naming another gets nothing).
// The grant is RFC 7523's jwt-bearer, the gateway authenticated as the client registered there.
import type { IdJagSettings } from '../settings.js';
import { requestToken, type TokenAnswer, TokenEndpointError } from '../token-endpoint.js';
import { discover } from './discovery.js';

export const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The upstream's authorization server, as the IdP is told of it and as the ID-JAG is presented there. */
export interface GrantSite {
  /** Its issuer: the ID-JAG's audience. */
  issuer: string;
  tokenEndpoint: string;
  /** The upstream as a resource (RFC 8707): what the ID-JAG and the token are for. */
  resource: string;
}

export class IdJagGrant {
  private site: Promise<GrantSite> | undefined;
  /** The issuer first found (none configured): ID-JAGs go to no other. */
  private boundIssuer: string | undefined;

  constructor(
    private readonly server: string,
    private readonly settings: IdJagSettings,
    /** The upstream's MCP endpoint, where discovery starts. */
    private readonly url: string,
  ) {}

  /** Found once, and again after a failure (the server may have moved, or come back). */
  grantSite(): Promise<GrantSite> {
    this.site ??= this.findSite().catch((error: unknown) => {
      this.site = undefined;
      throw error;
    });
    return this.site;
  }

  /** Presents the ID-JAG (jwt-bearer) at the site it was issued for; resolves with the upstream's token. */
  async redeem(idJag: string, site: GrantSite, scopes: string[]): Promise<TokenAnswer> {
    const { clientId, clientSecret, authMethod } = this.settings;
    return requestToken(
      site.tokenEndpoint,
      { clientId, clientSecret, authMethod },
      { grant_type: JWT_BEARER, assertion: idJag, scope: scopes.length ? scopes.join(' ') : undefined },
    );
  }

  private async findSite(): Promise<GrantSite> {
    const found = await discover(this.url, this.settings.issuer);
    const bound = this.settings.issuer ?? this.boundIssuer;
    if (bound !== undefined && bound.replace(/\/$/, '') !== found.issuer.replace(/\/$/, '')) {
      throw new TokenEndpointError(
        `the server names authorization server ${found.issuer}, but ID-JAGs are asked for ${bound}: the gateway ` +
          `presents them to no other. If the move is genuine, set servers.${this.server}.credentials.idJag.issuer ` +
          `to ${found.issuer} (and register the gateway's client there)`,
        undefined,
      );
    }
    this.boundIssuer ??= found.issuer;
    return { issuer: found.issuer, tokenEndpoint: found.tokenEndpoint, resource: found.resource };
  }
}
