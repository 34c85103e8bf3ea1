// What the edge reads of who may call and what each may do: one immutable bundle per config, built by
// src/gateway/build-security.ts (wiring) and read per request. Its type lives here, with the parts it is made of, so
// that
// the edge depends on policy/ and never on the module that builds it.
import type { PolicySet } from './allow-list.js';
import type { AuditLog } from './audit-log.js';
import type { Authenticator } from './authenticate.js';
import type { Guard } from './guard.js';
import type { GuardrailSet } from './guardrails/index.js';
import type { PinStore } from './pins.js';
import type { RateLimiter } from './rate-limit.js';
import type { AuthSetting, RateLimitSetting } from './settings.js';

export interface Security {
  readonly auth: AuthSetting;
  readonly authenticator: Authenticator;
  readonly policies: PolicySet;
  /** Present when any policy is configured. */
  readonly guard: Guard | undefined;
  readonly pins: PinStore;
  /** Present when there is anything to decide: authentication or policies. */
  readonly audit: AuditLog | undefined;
  readonly rateLimiter: RateLimiter | undefined;
  /** Present when guardrails are configured (policy/guardrails/; the edge applies them: src/guardrails/). */
  readonly guardrails: GuardrailSet | undefined;
  /** Every principal's limit unless one of its policies sets its own. */
  readonly defaultRateLimit: RateLimitSetting | undefined;
}
