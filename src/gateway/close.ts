// An orderly shutdown: tell load balancers first, stop taking work, let work in flight finish, then close
// the parts in the reverse order of their use.
import { setTimeout as delay } from 'node:timers/promises';
import type { GatewayParts } from './running.js';

export async function closeGateway(parts: GatewayParts): Promise<void> {
  await announceDraining(parts);
  await drainRequests(parts);
  parts.search.close();
  await parts.servers.closeAll();
  await parts.cache.close();
  await parts.security.close();
  parts.retries.close();
  await parts.sessionRelay?.close();
  await parts.tracer
    ?.shutdown()
    .catch((error: Error) => parts.log.warn({ err: error.message }, 'could not send the last spans'));
}

/**
 * First /readyz says "draining" while everything is still served, for listen.drainDelayMs, so a load
 * balancer's health check takes this replica out before it stops listening.
 */
async function announceDraining({ tracker, config, log }: GatewayParts): Promise<void> {
  tracker.draining = true;
  const { drainDelayMs } = config.current.listen;
  if (drainDelayMs > 0) {
    log.info({ drainDelayMs }, 'draining: /readyz answers 503 while requests are still served');
    await delay(drainDelayMs);
  }
}

/**
 * Then no new connections; idle ones close, busy ones after their answer; listen streams end (clients
 * open them again elsewhere); requests in flight finish (up to listen.drainMs), then what is left is cut.
 */
async function drainRequests({
  listenHub,
  servers,
  drain,
  retries,
  tracker,
  config,
  log,
}: GatewayParts): Promise<void> {
  listenHub.closeAll();
  servers.stopWatches();
  const closed = drain.close();
  await retries.withdraw();
  const { drainMs } = config.current.listen;
  if (!(await tracker.whenIdle(drainMs))) {
    log.warn(
      { inFlight: tracker.inFlight, drainMs },
      'requests still in flight after listen.drainMs; cutting them off',
    );
  }
  drain.cut();
  await closed;
}
