// Who may call and what each may do, built from the config (cold path) into one immutable bundle the edge
// reads per request. A reload builds a new bundle and swaps it in whole; requests in flight keep the one
// they started with, and a bundle that cannot be built leaves the old one serving.
import { PolicySet } from '../../policy/allow-list.js';
import { AuditLog } from '../../policy/audit-log.js';
import { Authenticator } from '../../policy/authenticate.js';
import { Guard, type GuardOptions } from '../../policy/guard.js';
import { PinStore } from '../../policy/pins.js';
import { MemoryRateLimiter, type RateLimiter } from '../../policy/rate-limit.js';
import type { Security } from '../../policy/security.js';
import type { AuthSetting } from '../../policy/settings.js';
import { guardrailNames, serverHeads, type GatewayConfig } from '../config/index.js';
import type { GuardrailSet } from '../../policy/guardrails/index.js';
import type { Log } from '../../infra/log.js';

export type { Security } from '../../policy/security.js';

/** Where the guard finds what only the running gateway knows. */
export type GuardWiring = Omit<GuardOptions, 'pins' | 'pinMaxAgeMs'>;

const OPEN_AUTH: AuthSetting = {
  anonymous: true,
  apiKeys: [],
  jwt: undefined,
  oauth: { resource: undefined, authorizationServers: [], scopes: [] },
};

export class SecurityHolder {
  private bundle!: Security;
  private rateLimiter: RateLimiter | undefined;
  private audit: { setting: string; log: AuditLog } | undefined;

  constructor(
    private readonly wiring: GuardWiring,
    private readonly log: Log,
  ) {}

  get current(): Security {
    return this.bundle;
  }

  /** Builds and installs the security of a config; throws (keeping the old one) when it cannot be built. */
  async install(config: GatewayConfig): Promise<void> {
    const auth: AuthSetting = config.auth ? toAuthSetting(config.auth) : OPEN_AUTH;
    const authenticator = await Authenticator.create(auth, this.log.child({ part: 'auth' }));
    const policies = PolicySet.compile(config.policies, new Set(Object.keys(config.servers)), serverHeads(config));
    const pins = await this.pinStore(config.pinsFile);
    const limited = config.rateLimit !== undefined || config.policies.some((p) => p.rateLimit !== undefined);
    const rateLimiter = limited ? await this.limiter(config) : undefined;
    const guardrails = config.guardrails.length > 0 ? await guardrailSet(config) : undefined;
    const audited = config.auth !== undefined || policies.active || guardrails !== undefined;
    const audit = audited ? this.auditLog(config.audit) : undefined;
    this.bundle = {
      auth,
      authenticator,
      policies,
      guard: policies.active ? new Guard({ ...this.wiring, pins, pinMaxAgeMs: config.pinsMaxAgeMs }) : undefined,
      pins,
      audit,
      rateLimiter,
      defaultRateLimit: config.rateLimit,
      guardrails,
    };
  }

  /**
   * Without a pins file, the pins live as long as the process (a reload must not forget them and re-pin a
   * changed tool). With one, the file is read afresh once pending writes are done: removing an entry and
   * reloading is how an operator approves a change.
   */
  private async pinStore(file: string | undefined): Promise<PinStore> {
    const previous = this.bundle?.pins;
    if (previous && file === undefined && previous.file === undefined) return previous;
    await previous?.flushed();
    return new PinStore(file, this.log.child({ part: 'pins' }));
  }

  async close(): Promise<void> {
    await this.bundle?.pins.flushed();
    await this.audit?.log.flush();
    await this.rateLimiter?.close();
  }

  /** One limiter for the gateway's life, so buckets survive reloads; shared through Redis when the cache is. */
  private async limiter(config: GatewayConfig): Promise<RateLimiter> {
    if (this.rateLimiter) return this.rateLimiter;
    if (config.cache.store === 'redis') {
      const { RedisRateLimiter } = await import('../../policy/redis-rate-limit.js');
      this.rateLimiter = await RedisRateLimiter.create({
        url: config.cache.url,
        sentinel: config.cache.sentinel,
        keyPrefix: config.cache.keyPrefix,
        commandTimeoutMs: config.cache.commandTimeoutMs,
        log: this.log.child({ part: 'rate-limit' }),
      });
    } else {
      this.rateLimiter = new MemoryRateLimiter();
    }
    return this.rateLimiter;
  }

  private auditLog(setting: GatewayConfig['audit']): AuditLog {
    const key = JSON.stringify(setting);
    if (this.audit?.setting !== key) {
      const previous = this.audit?.log;
      this.audit = { setting: key, log: new AuditLog(setting) };
      void previous?.flush();
    }
    return this.audit.log;
  }
}

/** Loaded only when the config has guardrails: a gateway without them never reads their modules. */
async function guardrailSet(config: GatewayConfig): Promise<GuardrailSet> {
  const { GuardrailSet } = await import('../../policy/guardrails/index.js');
  return GuardrailSet.compile(config.guardrails, guardrailNames(config));
}

function toAuthSetting(auth: NonNullable<GatewayConfig['auth']>): AuthSetting {
  const jwt = auth.jwt && {
    ...auth.jwt,
    audience:
      auth.jwt.audience === undefined
        ? [auth.oauth.resource!]
        : Array.isArray(auth.jwt.audience)
          ? auth.jwt.audience
          : [auth.jwt.audience],
  };
  return { anonymous: auth.anonymous, apiKeys: auth.apiKeys, jwt, oauth: auth.oauth };
}
