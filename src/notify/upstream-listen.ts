// Keeps one subscriptions/listen stream open to every modern upstream while it is ready, so the gateway
// hears its list changes (legacy upstreams send theirs unasked). What arrives surfaces as the upstream's
// 'listChanged' event, like a legacy server's notification.
import type { Upstream, UpstreamState } from '../../bridge/upstream.js';
import type { Log } from '../protocol/log.js';
import { META, SUPPORTED_VERSIONS } from '../protocol/mcp.js';

const FILTER = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };

export function watchModernUpstream(upstream: Upstream, log: Log): () => void {
  let open: AbortController | undefined;
  const onState = (state: UpstreamState): void => {
    if (state === 'ready' && upstream.status().era === 'modern' && !open) listen();
    if (state !== 'ready' && open) {
      open.abort();
      open = undefined;
    }
  };
  function listen(): void {
    const controller = (open = new AbortController());
    const request = {
      jsonrpc: '2.0' as const,
      id: `gateway-listen-${upstream.name}`,
      method: 'subscriptions/listen',
      params: { notifications: FILTER, _meta: { [META.protocolVersion]: SUPPORTED_VERSIONS[0], [META.clientCapabilities]: {} } },
    };
    void upstream.request(request, { signal: controller.signal, onNotification: (n) => void n }).then((response) => {
      if (controller.signal.aborted) return;
      if (open === controller) open = undefined;
      // The server ended it (or refused it): list changes will not be heard until the next start.
      log.info({ answer: 'error' in response ? response.error.message : 'ended' }, 'upstream closed its subscriptions/listen stream');
    });
  }
  upstream.events.on('state', onState);
  if (upstream.status().state === 'ready') onState('ready');
  return () => {
    upstream.events.off('state', onState);
    open?.abort();
  };
}
