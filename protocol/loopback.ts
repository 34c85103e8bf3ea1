// The one answer to "is this host this machine?" for the whole gateway: `localhost`, `::1` (also written
// `[::1]`), or an IPv4 literal in 127.0.0.0/8. Decided on parsed addresses, never on prefixes, so a name
// such as `127.attacker.example` (which any DNS server may point anywhere) is not loopback.
import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** A DNS name, an IPv4 literal, or a bracketed IPv6 literal: what a Host header names, without its port. */
export const HOST_NAME =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\])$/;

/** A host name or address literal (brackets allowed around IPv6; no port). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.length > 1 && host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  const family = isIP(bare);
  if (family === 4) return LOOPBACK.check(bare, 'ipv4');
  if (family === 6) return LOOPBACK.check(bare, 'ipv6');
  return false;
}

/** The host part of a Host header or URL authority (`[::1]:8080` → `::1`, `example.com:80` → `example.com`). */
export function hostOfAuthority(authority: string): string {
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    return close > 0 ? authority.slice(1, close) : authority;
  }
  const colon = authority.lastIndexOf(':');
  // More than one colon without brackets is a bare IPv6 address, not host:port.
  return colon > 0 && authority.indexOf(':') === colon ? authority.slice(0, colon) : authority;
}

/**
 * Whether credentials may travel to `url`: over https, or over plain http only to this machine (where
 * nobody else is on the path; development and tests). Unparsable URLs are not.
 */
export function isSecureOrLoopback(url: string | URL): boolean {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return false;
  }
  return parsed.protocol === 'https:' || (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname));
}
