// The security bundle of a gateway with authentication open (anonymous callers, no keys, no JWT) and the
// given policies: what the edge's unit tests hand createApp or a McpCall in place of the wiring's.
import { PolicySet } from '../policy/allow-list.js';
import { Authenticator } from '../policy/authenticate.js';
import { Guard } from '../policy/guard.js';
import { PinStore } from '../policy/pins.js';
import type { Security } from '../policy/security.js';
import type { PolicySetting } from '../policy/settings.js';
import { silentLog } from '../infra/log.js';

const OPEN = {
  anonymous: true,
  apiKeys: [],
  jwt: undefined,
  oauth: { resource: undefined, authorizationServers: [], scopes: [] },
};

/** Open authentication; with policies, a guard over the one server 'a' (prefix 'a', separator '__'). */
export async function openSecurity(policies: PolicySetting[] = []): Promise<Security> {
  const set = PolicySet.compile(policies, new Set(['a']));
  const pins = new PinStore(undefined, silentLog);
  return {
    auth: OPEN,
    authenticator: await Authenticator.create(OPEN, silentLog),
    policies: set,
    guard: set.active
      ? new Guard({ prefixes: new Map([['a', 'a']]), separator: '__', ownerOf: () => undefined, pins })
      : undefined,
    pins,
    audit: undefined,
    rateLimiter: undefined,
    defaultRateLimit: undefined,
    guardrails: undefined,
  };
}
