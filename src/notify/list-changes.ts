// How a change in an upstream's lists reaches listen streams: always through the cache, so a change seen
// on one replica reaches every replica sharing Redis, and this replica hears its own the same way.
import type { Upstream } from '../../bridge/upstream.js';
import type { ListCache } from '../../cache/list-cache.js';
import type { Aggregator } from '../aggregate/index.js';
import type { Log } from '../../infra/log.js';
import { madeStaleBy } from '../../protocol/mcp.js';
import { ListenHub } from './listen-hub.js';
import type { ResourceWatch } from './resource-watch.js';
import { watchUpstream, type UpstreamWatch } from './upstream-listen.js';

/** Every list a server's change may touch: what is dropped when nothing more precise is known. */
export const EVERY_LIST = [
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
];

/**
 * Follows one upstream's notifications into the cache. A restarted upstream, or a listen stream opened
 * again, may have changed while unobserved: then everything of it is dropped. (Not on the first start:
 * entries other replicas filled for this server are still good.)
 */
export function followUpstreamChanges(
  name: string,
  upstream: Upstream,
  cache: ListCache,
  resourceWatch: ResourceWatch,
  log: Log,
): UpstreamWatch {
  upstream.events.on('listChanged', (notification: { method: string; params?: { uri?: unknown } }) => {
    const lists = madeStaleBy(notification.method);
    const uri = notification.params?.uri;
    const changed =
      notification.method === 'notifications/resources/updated' && typeof uri === 'string' ? [uri] : undefined;
    if (lists.length) void cache.invalidate(name, lists, changed);
  });
  const resync = (): void => void cache.invalidate(name, EVERY_LIST);
  let readyBefore = false;
  upstream.events.on('state', (state: string) => {
    if (state !== 'ready') return;
    if (readyBefore) resync();
    readyBefore = true;
  });
  return watchUpstream(upstream, log, resync, () => resourceWatch.urisOf(name));
}

/** Where listen streams learn what changed: the running servers, their resource watch and the aggregate. */
export interface ListenSources {
  serverNames(): Iterable<string>;
  resourceWatch: ResourceWatch;
  aggregate: Aggregator;
}

/** This replica's listen streams, told of every change the cache hears of (ours, or another replica's). */
export function createListenHub(cache: ListCache, sources: ListenSources): ListenHub {
  const { resourceWatch, aggregate } = sources;
  const listenHub = new ListenHub({
    owner: (uri, endpoint) => endpoint ?? aggregate.ownerOf(uri),
    add: (upstream, uri) => resourceWatch.add(upstream, uri),
    remove: (upstream, uri) => resourceWatch.remove(upstream, uri),
  });
  // resources/read changed: the URIs named, or (a resync, nothing named) every URI a client subscribes to.
  const announce = (upstream: string, lists: readonly string[], changed?: readonly string[]): void => {
    aggregate.listsChanged();
    listenHub.publish(upstream, lists);
    if (!lists.includes('resources/read')) return;
    for (const uri of changed ?? resourceWatch.urisOf(upstream)) listenHub.publishResourceUpdated(upstream, uri);
  };
  cache.onInvalidate(announce);
  // Redis's invalidation channel was away: other replicas' changes were missed, for any upstream.
  cache.onMissedChanges(() => {
    for (const name of sources.serverNames()) announce(name, EVERY_LIST);
  });
  return listenHub;
}
