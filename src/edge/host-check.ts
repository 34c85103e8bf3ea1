// DNS-rebinding defence for a gateway on loopback: a page served from attacker.example can make the
// victim's browser resolve attacker.example to 127.0.0.1 and talk to the gateway as "same origin" (no
// Origin header on a same-origin GET). The browser still sends `Host: attacker.example`, so on a loopback
// listener only loopback Host names (or those listed in listen.allowedHosts) are served, on every route.
import { hostOfAuthority, isLoopbackHost } from '../../protocol/loopback.js';

export type HostCheck = (hostHeader: string | undefined) => boolean;

/** Host headers already seen to pass; bounded, so nobody can grow it (only passing values are kept). */
const MEMO_LIMIT = 64;

/**
 * undefined when nothing is checked: a listener beyond loopback with no listen.allowedHosts (its
 * callers are authenticated, and the names it is reached by are the operator's business).
 */
export function hostChecker(listenHost: string, allowedHosts: readonly string[]): HostCheck | undefined {
  if (!isLoopbackHost(listenHost) && allowedHosts.length === 0) return undefined;
  const listed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  // The common case, the same Host header on every request, costs one Set lookup and allocates nothing.
  const passed = new Set<string>();
  return (hostHeader) => {
    // No Host at all is HTTP/1.0 (Node refuses HTTP/1.1 without one): a balancer's health probe, never a
    // browser, which always names the host it thinks it reached — the one thing rebinding relies on.
    if (hostHeader === undefined) return true;
    if (passed.has(hostHeader)) return true;
    const host = hostOfAuthority(hostHeader).toLowerCase();
    const ok = isLoopbackHost(host) || listed.has(host);
    if (ok && passed.size < MEMO_LIMIT) passed.add(hostHeader);
    return ok;
  };
}
