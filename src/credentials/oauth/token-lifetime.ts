// When a stored access token is refreshed before use: ahead of its expiry by a fraction of its lifetime, so a
// short-lived token is not refreshed on every call (nor a per-caller child holding it restarted each time).
import type { OAuthRecord } from '../record.js';

/**
 * A token this close to its expiry is refreshed before use: 30 s, or a quarter of its lifetime when that is
 * shorter, so a token living 20 s is used for 15 s before its refresh instead of being refreshed on every call.
 */
const EXPIRY_MARGIN_MS = 30_000;
const REFRESH_AHEAD_FRACTION = 0.25;
/**
 * But never less than this: a token must outlive its trip to the server (one living under it is refreshed on
 * each use).
 */
const MIN_EXPIRY_MARGIN_MS = 2_000;
/** Whether `record`'s access token is due for its refresh now. */
export function expiresSoon(record: Pick<OAuthRecord, 'expiresAt' | 'issuedAt'>): boolean {
  if (record.expiresAt === undefined) return false;
  const lifetime = record.issuedAt === undefined ? undefined : record.expiresAt - record.issuedAt;
  const margin =
    lifetime === undefined || lifetime <= 0
      ? EXPIRY_MARGIN_MS
      : Math.min(EXPIRY_MARGIN_MS, Math.max(MIN_EXPIRY_MARGIN_MS, lifetime * REFRESH_AHEAD_FRACTION));
  return record.expiresAt - margin <= Date.now();
}
