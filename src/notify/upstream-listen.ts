// Keeps one subscriptions/listen stream open to every upstream while it is ready, so the gateway hears its
// list changes and the resources its clients watch. What arrives surfaces as the upstream's 'listChanged'
// event. (A 2025 server has no listen: bridge/legacy/legacy-dialect.ts plays it with resources/subscribe, so
// this module never asks which era a server speaks.) A stream that ends while the upstream stays ready (a
// remote server restarted quickly) is opened again with backoff; when it is acknowledged again, `resync`
// runs, because changes made while nobody listened were missed.
import { withoutCapabilityLinks } from '../../protocol/capability-links.js';
import type { Upstream, UpstreamState } from '../../bridge/upstream.js';
import { ErrorCode, errorResponse } from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import { ownRequestMeta } from '../../infra/own-request-meta.js';

const FILTER = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export interface UpstreamWatch {
  /** The set of resources to subscribe changed: opens the stream again with the current set. */
  resourcesChanged(): void;
  stop(): void;
}

/** `resources` gives the URIs the gateway's clients subscribe to, read each time a stream opens. */
export function watchUpstream(
  upstream: Upstream,
  log: Log,
  resync: () => void,
  resources: () => readonly string[] = () => [],
): UpstreamWatch {
  let open: AbortController | undefined;
  let retry: NodeJS.Timeout | undefined;
  let retryMs = RETRY_FIRST_MS;
  let stopped = false;
  let acknowledgedBefore = false;

  const wanted = (): boolean => !stopped && upstream.status().state === 'ready';
  const onState = (state: UpstreamState): void => {
    if (state === 'ready') {
      retryMs = RETRY_FIRST_MS;
      if (!open && wanted()) listen();
    } else {
      clearTimeout(retry);
      open?.abort();
      open = undefined;
    }
  };

  function listen(): void {
    const controller = (open = new AbortController());
    const uris = resources();
    const request = {
      jsonrpc: '2.0' as const,
      id: `gateway-listen-${upstream.name}`,
      method: 'subscriptions/listen',
      params: {
        notifications: uris.length ? { ...FILTER, resourceSubscriptions: [...uris] } : FILTER,
        _meta: ownRequestMeta(),
      },
    };
    const onNotification = (notification: { method: string }): void => {
      if (notification.method !== 'notifications/subscriptions/acknowledged') return;
      retryMs = RETRY_FIRST_MS;
      if (acknowledgedBefore) resync();
      acknowledgedBefore = true;
    };
    // An upstream that throws instead of answering (a bug) ends the stream like an error answer: retried
    // with backoff, and no rejection left unhandled, which would end the gateway's process.
    const thrown = (error: unknown) =>
      errorResponse(request.id, ErrorCode.InternalError, `the listen request threw: ${String(error)}`);
    void upstream
      .request(request, { signal: controller.signal, onNotification })
      .then(undefined, thrown)
      .then((response) => {
        if (controller.signal.aborted || open !== controller) return;
        open = undefined;
        if ('error' in response && response.error.code === ErrorCode.MethodNotFound) {
          log.warn({}, 'upstream does not serve subscriptions/listen; its list changes will not be heard');
          return;
        }
        log.info(
          {
            answer: 'error' in response ? withoutCapabilityLinks(response.error.message) : 'ended',
            retryInMs: retryMs,
          },
          'upstream closed its subscriptions/listen stream; opening it again',
        );
        retry = setTimeout(() => {
          if (!open && wanted()) listen();
        }, retryMs);
        retry.unref();
        retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
      });
  }

  upstream.events.on('state', onState);
  if (upstream.status().state === 'ready') onState('ready');
  return {
    resourcesChanged() {
      if (!open) return; // the next stream picks them up
      // Replacing the stream is the only way to change its filter; the new one is acknowledged like any.
      open.abort();
      open = undefined;
      acknowledgedBefore = false;
      if (wanted()) listen();
    },
    stop() {
      stopped = true;
      upstream.events.off('state', onState);
      clearTimeout(retry);
      open?.abort();
    },
  };
}
