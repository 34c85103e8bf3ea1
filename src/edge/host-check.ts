// DNS-rebinding defence for a gateway on loopback: a page served from attacker.example can make the
// victim's browser resolve attacker.example to 127.0.0.1 and talk to the gateway as "same origin" (no
// Origin header on a same-origin GET). The browser still sends `Host: attacker.example`, so on a loopback
// listener only loopback Host names (or those listed in listen.allowedHosts) are served, on every route.
import { HOST_NAME, isLoopbackHost } from '../../protocol/loopback.js';

export type HostCheck = (hostHeader: string | undefined) => boolean;

/** Host headers already seen to pass; bounded, so nobody can grow it (only passing values are kept). */
const MEMO_LIMIT = 64;

/**
 * undefined when nothing is checked: a listener beyond loopback with no listen.allowedHosts (its
 * callers are authenticated, and the names it is reached by are the operator's business). Where Host is
 * checked, listen.publicUrl's host passes too: a loopback listener behind a reverse proxy is reached by it
 * (issue 46 item 5). publicUrl never turns checking on: probes sending `Host: <pod IP>` and replicas calling
 * each other by address must keep working.
 */
export function hostChecker(
  listenHost: string,
  allowedHosts: readonly string[],
  publicUrl?: string,
): HostCheck | undefined {
  if (!isLoopbackHost(listenHost) && allowedHosts.length === 0) return undefined;
  const listed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  if (publicUrl !== undefined) listed.add(new URL(publicUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase());
  const passed = new Set<string>();
  // Each request's Host is a fresh string: comparing it with the last one that passed costs less than the
  // hash a Set lookup computes for it.
  let lastPassed: string | undefined;
  return (hostHeader) => {
    // No Host at all is HTTP/1.0 (Node refuses HTTP/1.1 without one): a balancer's health probe, never a
    // browser, which always names the host it thinks it reached — the one thing rebinding relies on.
    if (hostHeader === undefined || hostHeader === lastPassed) return true;
    if (passed.has(hostHeader)) {
      lastPassed = hostHeader;
      return true;
    }
    const host = strictHostOf(hostHeader)?.toLowerCase();
    const ok = host !== undefined && (isLoopbackHost(host) || listed.has(host));
    if (ok && passed.size < MEMO_LIMIT) passed.add(hostHeader);
    if (ok) lastPassed = hostHeader;
    return ok;
  };
}

/**
 * An authority as RFC 9110 lets a Host header spell it (host, then an optional :port of digits), else
 * undefined. Strict, as a lenient split is what rebinding abuses: `127.0.0.1:80@evil.com` would pass a
 * last-colon split as 127.0.0.1, while a URL parser (a browser's, a proxy's) sees evil.com in it.
 */
export function strictHostOf(authority: string): string | undefined {
  if (authority.length > MAX_AUTHORITY) return undefined;
  const match = AUTHORITY.exec(authority);
  if (match === null || !HOST_NAME.test(match[1]!)) return undefined;
  const host = match[1]!;
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

/** A DNS name is at most 253 characters; with brackets, a port and slack this bounds every real Host. */
const MAX_AUTHORITY = 300;
const AUTHORITY = /^([^:[\]]+|\[[^\]]*\])(?::\d{1,5})?$/;
