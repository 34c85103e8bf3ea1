// What policy/ is configured with: plain shapes that src/config/config.ts validates into. Kept here so policy/
// never imports the config loader.

export interface ApiKeySetting {
  /** Lower-case hex SHA-256 of the key (as configured with `sha256:`, or computed from `key:` at load). */
  sha256: string;
  principal: string;
  groups: readonly string[];
}

export interface JwtSetting {
  issuer: string;
  /** Accepted `aud` values; defaults to oauth.resource. */
  audience: readonly string[];
  jwksUrl?: string;
  jwksFile?: string;
  publicKeyFile?: string;
  algorithms: readonly string[];
  principalClaim: string;
  groupsClaim: string;
  clockToleranceSec: number;
}

export interface OAuthSetting {
  /** This gateway's resource identifier (its public base URL); tokens must name it as their audience. */
  resource?: string | undefined;
  authorizationServers: readonly string[];
  /** Scopes every token must carry; advertised in the metadata and in WWW-Authenticate. */
  scopes: readonly string[];
}

export interface AuthSetting {
  anonymous: boolean;
  apiKeys: readonly ApiKeySetting[];
  jwt: JwtSetting | undefined;
  oauth: OAuthSetting;
}

export interface RateLimitSetting {
  requestsPerMinute: number;
  /** Requests allowed at once before the steady rate applies; defaults to requestsPerMinute. */
  burst: number;
}

export interface PolicyRules {
  servers?: readonly string[];
  tools?: readonly string[];
  prompts?: readonly string[];
  resources?: readonly string[];
}

export interface ConditionSetting {
  /** Glob over the tool names the caller sees. */
  tool: string;
  /** Common Expression Language; sees `args`, `principal` ({ id, groups }), `tool` and `server`. */
  expr: string;
}

export interface PolicySetting {
  name: string;
  principals: { ids?: readonly string[]; groups?: readonly string[] };
  allow: PolicyRules;
  deny: PolicyRules;
  when: readonly ConditionSetting[];
  pin: boolean;
  rateLimit?: RateLimitSetting | undefined;
}

export interface AuditSetting {
  /** `stderr`, or a file path the audit lines are appended to. */
  destination: string;
  /** Record tool arguments in the audit line (off: arguments may hold personal data). */
  arguments: boolean;
}
