// What replicas trust of one another when a retry is forwarded to the replica holding its call. Redis is
// shared infrastructure, not a replica: whoever can write to it must not be able to redirect retries or
// collect credentials. So, all from mrtr.secret (the one secret replicas already share):
// - registry entries are signed (instance, URL, expiry), and an entry that does not verify is ignored;
// - a forward carries no client credentials: the sending replica vouches for the caller in a signed header
//   (principal, cache context, path, a digest of the body, expiry) that only a replica can make;
// - a forward goes only to an address mrtr.peers allows (peers.ts).
// Each use gets its own key derived from the secret, so a signature made for one cannot pass as another.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../policy/principal.js';

/** How long a vouched-for forward stays good: the hop is one request, so seconds are plenty. */
const CALLER_TTL_MS = 30_000;
export const CALLER_HEADER = 'x-mcp-gateway-caller';

export interface ForwardedCaller {
  principal: Principal;
  /** The caller's cache and requestState context, as the sending replica computed it. */
  context: string;
  /** base64url SHA-256 of the forwarded body: checked once the body has been read. */
  bodyDigest: string;
}

interface CallerClaims {
  id: string;
  groups: string[];
  scopes: string[];
  via: Principal['via'];
  context: string;
  path: string;
  body: string;
  exp: number;
}

export class PeerTrust {
  private readonly registryKey: Buffer;
  private readonly callerKey: Buffer;

  constructor(secret: Buffer) {
    this.registryKey = createHmac('sha256', secret).update('mcp-gateway registry entry v1').digest();
    this.callerKey = createHmac('sha256', secret).update('mcp-gateway forwarded caller v1').digest();
  }

  /** The registry value for `instance` at `url`, good until `expiresAt`. */
  registryEntry(instance: string, url: string, expiresAt: number): string {
    const body = Buffer.from(JSON.stringify({ url, exp: expiresAt })).toString('base64url');
    return `${body}.${mac(this.registryKey, `${instance}\n${body}`)}`;
  }

  /** The URL an entry names, when a replica with this secret wrote it for `instance` and it has not expired. */
  openRegistryEntry(instance: string, entry: string, now = Date.now()): string | undefined {
    const body = verified(this.registryKey, entry, (b) => `${instance}\n${b}`);
    if (body === undefined) return undefined;
    const claims = parse(body) as { url?: unknown; exp?: unknown } | undefined;
    return typeof claims?.url === 'string' && typeof claims.exp === 'number' && claims.exp > now
      ? claims.url
      : undefined;
  }

  /** The header that vouches for the caller of one forwarded request. */
  vouch(principal: Principal, context: string, path: string, body: string, now = Date.now()): string {
    const claims: CallerClaims = {
      id: principal.id,
      groups: [...principal.groups],
      scopes: [...principal.scopes],
      via: principal.via,
      context,
      path,
      body: digest(body),
      exp: now + CALLER_TTL_MS,
    };
    const encoded = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${encoded}.${mac(this.callerKey, encoded)}`;
  }

  /**
   * The caller a replica vouched for on `path`, or undefined: altered, expired, for another path, or not a replica's.
   */
  openVouch(header: string | undefined, path: string, now = Date.now()): ForwardedCaller | undefined {
    if (header === undefined) return undefined;
    const body = verified(this.callerKey, header, (b) => b);
    const claims = body === undefined ? undefined : (parse(body) as CallerClaims | undefined);
    if (!claims || claims.path !== path || !(claims.exp > now)) return undefined;
    if (
      typeof claims.id !== 'string' ||
      !Array.isArray(claims.groups) ||
      !Array.isArray(claims.scopes) ||
      typeof claims.context !== 'string'
    )
      return undefined;
    if (!['anonymous', 'api-key', 'jwt'].includes(claims.via)) return undefined;
    const principal: Principal = Object.freeze({
      id: claims.id,
      groups: Object.freeze(claims.groups),
      scopes: Object.freeze(claims.scopes),
      via: claims.via,
    });
    return { principal, context: claims.context, bodyDigest: claims.body };
  }
}

export function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function mac(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url');
}

/** The body of `<body>.<mac>` when the mac is right, compared in constant time. */
function verified(key: Buffer, token: string, input: (body: string) => string): string | undefined {
  const dot = token.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const body = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1));
  const expected = Buffer.from(mac(key, input(body)));
  return given.length === expected.length && timingSafeEqual(given, expected) ? body : undefined;
}

function parse(body: string): unknown {
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
