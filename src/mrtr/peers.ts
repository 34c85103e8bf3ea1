// Where a retry may be forwarded: the address a registry entry names must be one mrtr.peers allows (host
// names, addresses, CIDRs), or by default a loopback or private address. Even a validly signed entry is
// checked, so a leaked mrtr.secret alone cannot send retries across the internet.
import { BlockList, isIP } from 'node:net';
import { isLoopbackHost } from '../../protocol/loopback.js';

/** RFC 1918, unique-local and link-local ranges: where replicas of one deployment normally talk. */
const PRIVATE = new BlockList();
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4');
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4');
PRIVATE.addSubnet('169.254.0.0', 16, 'ipv4');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');
PRIVATE.addSubnet('fe80::', 10, 'ipv6');

export type PeerCheck = (url: string) => boolean;

/** A check for registry URLs; `peers` empty means the default (loopback or private addresses). */
export function peerChecker(peers: readonly string[]): PeerCheck {
  const names = new Set<string>();
  const ranges = new BlockList();
  for (const peer of peers) {
    const slash = peer.indexOf('/');
    if (slash !== -1) {
      const address = peer.slice(0, slash);
      ranges.addSubnet(address, Number(peer.slice(slash + 1)), isIP(address) === 6 ? 'ipv6' : 'ipv4');
    } else if (isIP(peer)) ranges.addAddress(peer, isIP(peer) === 6 ? 'ipv6' : 'ipv4');
    else names.add(peer.toLowerCase());
  }
  const listed = peers.length > 0;
  return (url) => {
    let host: string;
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
      host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
    } catch {
      return false;
    }
    const family = isIP(host);
    if (listed)
      return family === 0 ? names.has(host.toLowerCase()) : ranges.check(host, family === 6 ? 'ipv6' : 'ipv4');
    return isLoopbackHost(host) || (family !== 0 && PRIVATE.check(host, family === 6 ? 'ipv6' : 'ipv4'));
  };
}

/** A problem with one mrtr.peers entry, worded for the config error; undefined when it is fine. */
export function peerProblem(peer: string): string | undefined {
  const slash = peer.indexOf('/');
  if (slash === -1) {
    return isIP(peer) || /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(peer)
      ? undefined
      : `"${peer}" is neither a host name, an address nor a CIDR such as 10.0.0.0/8`;
  }
  const address = peer.slice(0, slash);
  const bits = peer.slice(slash + 1);
  const family = isIP(address);
  const max = family === 6 ? 128 : 32;
  return family !== 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= max
    ? undefined
    : `"${peer}" is not a CIDR: write an address, "/" and a prefix length up to ${family === 6 ? 128 : 32}, e.g. ` +
        `10.0.0.0/8`;
}
