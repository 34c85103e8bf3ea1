// DNS-rebinding defence: a browser-sent Origin must be a loopback origin or one the operator listed.
import { isLoopbackHost } from '../../protocol/loopback.js';

export type OriginCheck = (origin: string | undefined) => boolean;

export function originChecker(allowedOrigins: readonly string[]): OriginCheck {
  const allowed = new Set(allowedOrigins.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  const any = allowed.has('*');
  return (origin) => {
    if (origin === undefined) return true; // not a browser: nothing to defend against here
    if (any) return true;
    const normalized = origin.trim().toLowerCase();
    if (allowed.has(normalized)) return true;
    if (normalized === 'null' || normalized.includes(',')) return false; // opaque or duplicated Origin
    try {
      const url = new URL(normalized);
      return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname);
    } catch {
      return false;
    }
  };
}
