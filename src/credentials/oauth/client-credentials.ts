// servers.<name>.credentials type: clientCredentials — the gateway's own service identity at the upstream's
// authorization server (OAuth 2.1 client_credentials; the MCP ext-auth extension "OAuth Client Credentials"). Not
// a person's: one token, fetched on first use, shared by every caller of this server, used until shortly before
// it expires and then fetched again with a new client_credentials request (the grant brings no refresh token).
// The client authenticates with its secret (client_secret_basic or _post) or with an assertion signed by its key
// (private_key_jwt, RFC 7523). The token endpoint is the configured one, else discovered from the upstream (its
// 401 and protected resource metadata, then the authorization server's metadata), and the client's credentials go
// only to the authorization server it is registered at.
import type { CallerIdentity } from '../../../bridge/upstream.js';
import type { CredentialSource, Obtained } from '../credential-source.js';
import type { ClientCredentialsSettings, ServiceAuthMethod } from '../settings.js';
import { type AssertingClient, requestToken, TokenEndpointError, type TokenClient } from '../token-endpoint.js';
import { clientAssertion } from './client-assertion.js';
import { DiscoveryError, discover } from './discovery.js';
import { type SigningKey, signingKey } from '../../../infra/signing-key.js';
import { expiresSoon } from './token-lifetime.js';

/** Without expires_in, a token is used this long before a new one is asked for. */
const DEFAULT_LIFETIME_MS = 300_000;

export interface ClientCredentialsOptions {
  server: string;
  /** The upstream's URL: where discovery starts, and the resource asked for when the config names none. */
  url: string;
  settings: ClientCredentialsSettings;
}

/** Where tokens are asked for, and as whom. */
interface TokenSite {
  tokenEndpoint: string;
  /** The authorization server's issuer (an assertion's audience); the token endpoint when none is known. */
  audience: string;
  /** The client authentication methods the server offers; empty when it did not say. */
  offered: string[];
  resource: string;
  scopes: string[];
}

interface HeldToken {
  authorization: string;
  /** Epoch ms: the server's expires_in, or DEFAULT_LIFETIME_MS. */
  expiresAt: number;
  issuedAt: number;
}

export class ClientCredentialsSource implements CredentialSource {
  /** Every caller reaches the server as the gateway: nobody connects, and a failure is the answer. */
  readonly sharedIdentity = true;
  private token: HeldToken | undefined;
  /** One token request at a time; every caller arriving meanwhile waits for it. */
  private flight: Promise<Obtained> | undefined;
  /** Where tokens are asked for, found once and kept until a request fails. */
  private site: Promise<TokenSite> | undefined;
  /** The issuer the client's credentials were first sent to (none configured): they go to no other. */
  private boundIssuer: string | undefined;
  private readonly signer: SigningKey | undefined;

  constructor(readonly options: ClientCredentialsOptions) {
    const { privateKey, algorithm } = options.settings;
    if (privateKey !== undefined) {
      // The config checked the key at load: a problem here is a key changed since, told on every call.
      const found = signingKey(privateKey, algorithm);
      this.signer = 'problem' in found ? undefined : found;
    }
  }

  cached(): string | undefined {
    const token = this.token;
    return token !== undefined && !expiresSoon(token) ? token.authorization : undefined;
  }

  obtain(_caller: CallerIdentity): Promise<Obtained> {
    const authorization = this.cached();
    if (authorization !== undefined) return Promise.resolve({ authorization });
    this.flight ??= this.fetchToken().finally(() => {
      this.flight = undefined;
    });
    return this.flight;
  }

  /** The server refused the token (401): the next obtain, the retry's, asks for a new one. */
  rejected(_caller: CallerIdentity, authorization: string): void {
    if (this.token?.authorization === authorization) this.token = undefined;
  }

  private async fetchToken(): Promise<Obtained> {
    const { server, settings } = this.options;
    try {
      const site = await this.tokenSite();
      const issuedAt = Date.now();
      const answer = await requestToken(site.tokenEndpoint, await this.client(site), {
        grant_type: 'client_credentials',
        resource: site.resource,
        scope: site.scopes.length ? site.scopes.join(' ') : undefined,
      });
      this.token = {
        authorization: `Bearer ${answer.accessToken}`,
        expiresAt: answer.expiresAt ?? issuedAt + DEFAULT_LIFETIME_MS,
        issuedAt,
      };
      return { authorization: this.token.authorization };
    } catch (error) {
      // Found again next time: the server may have moved, or come back.
      this.site = undefined;
      const said = error instanceof TokenEndpointError || error instanceof DiscoveryError ? error.message : `${error}`;
      const fix =
        error instanceof DiscoveryError && settings.tokenEndpoint === undefined
          ? `; set servers.${server}.credentials.tokenEndpoint to ask there without discovery`
          : `; check servers.${server}.credentials`;
      return { refused: `servers.${server}: the gateway could not get its own token for this server: ${said}${fix}` };
    }
  }

  private tokenSite(): Promise<TokenSite> {
    this.site ??= this.findTokenSite();
    return this.site;
  }

  private async findTokenSite(): Promise<TokenSite> {
    const { settings, url } = this.options;
    if (settings.tokenEndpoint !== undefined) {
      return {
        tokenEndpoint: settings.tokenEndpoint,
        audience: settings.issuer ?? settings.tokenEndpoint,
        offered: [],
        resource: settings.resource ?? url,
        scopes: settings.scopes,
      };
    }
    const found = await discover(url, settings.issuer);
    this.checkIssuer(found.issuer);
    return {
      tokenEndpoint: found.tokenEndpoint,
      audience: found.issuer,
      offered: found.tokenAuthMethods,
      resource: settings.resource ?? found.resource,
      scopes: settings.scopes.length ? settings.scopes : found.scopes,
    };
  }

  /**
   * The client's secret (or an assertion for one audience) goes only to the authorization server it is registered
   * at: the configured issuer, else the first one found. A resource whose metadata starts naming another (moved, or
   * tampered with) gets nothing.
   */
  private checkIssuer(issuer: string): void {
    const bound = this.options.settings.issuer ?? this.boundIssuer;
    if (bound !== undefined && bound.replace(/\/$/, '') !== issuer.replace(/\/$/, '')) {
      throw new TokenEndpointError(
        `the server now names authorization server ${issuer}, but its client is registered at ${bound}: the ` +
          `gateway sends its client credentials to no other. If the move is genuine, register there and set ` +
          `servers.${this.options.server}.credentials.issuer to match`,
        undefined,
      );
    }
    this.boundIssuer ??= issuer;
  }

  private async client(site: TokenSite): Promise<TokenClient | AssertingClient> {
    const { clientId, clientSecret } = this.options.settings;
    const method = this.method(site.offered);
    if (method !== 'private_key_jwt') return { clientId, clientSecret, authMethod: method };
    if (!this.signer)
      throw new TokenEndpointError('its privateKey is not a PEM private key the gateway can sign with', undefined);
    return {
      clientId,
      authMethod: 'private_key_jwt',
      clientAssertion: await clientAssertion(clientId, site.audience, this.signer),
    };
  }

  /** The configured method; else the key's, or with a secret basic unless the server offers only post. */
  private method(offered: string[]): ServiceAuthMethod {
    const { authMethod, privateKey } = this.options.settings;
    if (authMethod !== undefined) return authMethod;
    if (privateKey !== undefined) return 'private_key_jwt';
    return offered.includes('client_secret_post') && !offered.includes('client_secret_basic')
      ? 'client_secret_post'
      : 'client_secret_basic';
  }
}
