// Which resources some listen client has subscribed to, per upstream, and keeping each upstream told:
// a 2025 server gets resources/subscribe and resources/unsubscribe; a modern one gets them as the
// resourceSubscriptions of the gateway's own listen stream to it. Counted, so two clients watching one
// URI cost the upstream one subscription.
import type { Upstream } from '../../bridge/upstream.js';
import type { Log } from '../infra/log.js';
import { META, SUPPORTED_VERSIONS } from '../protocol/mcp.js';

export interface ModernResourceSink {
  /** Opens the gateway's listen stream to that upstream again with the current resourceSubscriptions. */
  resourcesChanged(): void;
}

export class ResourceWatch {
  private readonly counts = new Map<string, Map<string, number>>();

  constructor(
    private readonly upstreams: ReadonlyMap<string, Upstream>,
    private readonly modern: ReadonlyMap<string, ModernResourceSink>,
    private readonly log: Log,
  ) {}

  add(upstream: string, uri: string): void {
    let uris = this.counts.get(upstream);
    if (!uris) this.counts.set(upstream, (uris = new Map()));
    const count = (uris.get(uri) ?? 0) + 1;
    uris.set(uri, count);
    if (count === 1) this.tell(upstream, uri, 'resources/subscribe');
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
    this.tell(upstream, uri, 'resources/unsubscribe');
  }

  /**
   * An upstream became ready (first start or restart): a 2025 server has forgotten its subscriptions, so
   * they are made again. (A modern one gets them when the gateway's listen stream to it opens.)
   */
  upstreamReady(name: string): void {
    if (this.upstreams.get(name)?.status().era !== 'legacy') return;
    for (const uri of this.urisOf(name)) this.tell(name, uri, 'resources/subscribe');
  }

  /** The URIs a modern upstream's listen stream should carry (also when it is opened again). */
  urisOf(upstream: string): string[] {
    return [...(this.counts.get(upstream)?.keys() ?? [])];
  }

  private tell(name: string, uri: string, method: 'resources/subscribe' | 'resources/unsubscribe'): void {
    const upstream = this.upstreams.get(name);
    // Not started yet: upstreamReady (legacy) or the listen stream's opening (modern) will tell it.
    if (!upstream || upstream.status().state !== 'ready') return;
    if (upstream.status().era === 'modern') {
      this.modern.get(name)?.resourcesChanged();
      return;
    }
    const request = {
      jsonrpc: '2.0' as const,
      id: `gateway-${method}`,
      method,
      params: { uri, _meta: { [META.protocolVersion]: SUPPORTED_VERSIONS[0], [META.clientCapabilities]: {} } },
    };
    void upstream.request(request).then((response) => {
      if ('error' in response) this.log.warn({ server: name, uri, error: response.error.message }, `upstream refused ${method}`);
    });
  }
}
