// Who a caller is, as the cache tells private entries apart: a keyed hash (never the credential itself),
// so what lands in a shared cache cannot be used to confirm a guessed token.
import { createHmac } from 'node:crypto';
import type { Principal } from '../../policy/principal.js';
import { ANONYMOUS } from '../layers/index.js';

/**
 * Without authentication, callers are told apart by whatever credentials they send: a keyed hash, so what
 * lands in a shared cache cannot be used to confirm a guessed token.
 */
export function authContext(key: Buffer, authorization: string | undefined): string {
  return authorization === undefined
    ? ANONYMOUS
    : createHmac('sha256', key).update(authorization).digest('base64url').slice(0, 22);
}

/**
 * With authentication, callers are told apart by principal, so a refreshed token keeps its cache entries.
 * Remembered per principal object (an API key's lives as long as the config; a JWT's, one request).
 */
export function principalContexts(key: Buffer): (principal: Principal) => string {
  const contexts = new WeakMap<Principal, string>();
  return (principal) => {
    if (principal.via === 'anonymous') return ANONYMOUS;
    let context = contexts.get(principal);
    if (context === undefined) {
      context = createHmac('sha256', key)
        .update(JSON.stringify(['principal', principal.id, principal.groups]))
        .digest('base64url')
        .slice(0, 22);
      contexts.set(principal, context);
    }
    return context;
  };
}
