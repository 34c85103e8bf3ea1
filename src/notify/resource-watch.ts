// Which resources some listen client has subscribed to, per upstream, and keeping each upstream told: as the
// resourceSubscriptions of the gateway's own listen stream to it (upstream-listen.ts; for a 2025 server the
// legacy adapter turns them into resources/subscribe and resources/unsubscribe). Counted, so two clients
// watching one URI cost the upstream one subscription.
import type { Upstream } from '../../bridge/upstream.js';

export interface ResourceSink {
  /** Opens the gateway's listen stream to that upstream again with the current resourceSubscriptions. */
  resourcesChanged(): void;
}

export class ResourceWatch {
  private readonly counts = new Map<string, Map<string, number>>();

  constructor(
    private readonly upstreams: ReadonlyMap<string, Upstream>,
    private readonly sinks: ReadonlyMap<string, ResourceSink>,
  ) {}

  add(upstream: string, uri: string): void {
    let uris = this.counts.get(upstream);
    if (!uris) this.counts.set(upstream, (uris = new Map()));
    const count = (uris.get(uri) ?? 0) + 1;
    uris.set(uri, count);
    if (count === 1) this.tell(upstream);
  }

  remove(upstream: string, uri: string): void {
    const uris = this.counts.get(upstream);
    const count = (uris?.get(uri) ?? 0) - 1;
    if (!uris || count < 0) return;
    if (count > 0) {
      uris.set(uri, count);
      return;
    }
    uris.delete(uri);
    this.tell(upstream);
  }

  /**
   * The URIs an upstream's listen stream should carry. Read each time the stream opens, which it does when
   * the upstream becomes ready: a restarted server gets its subscriptions again that way.
   */
  urisOf(upstream: string): string[] {
    return [...(this.counts.get(upstream)?.keys() ?? [])];
  }

  private tell(name: string): void {
    const upstream = this.upstreams.get(name);
    // Not started yet: the listen stream's opening will tell it.
    if (upstream?.status().state !== 'ready') return;
    this.sinks.get(name)?.resourcesChanged();
  }
}
