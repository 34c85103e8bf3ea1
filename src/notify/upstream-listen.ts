// Keeps one subscriptions/listen stream open to every upstream while it is ready, so the gateway hears its
// list changes and the resources its clients watch. What arrives surfaces as the upstream's 'listChanged'
// event. (A 2025 server has no listen: bridge/legacy/legacy-dialect.ts plays it with resources/subscribe, so
// this module never asks which era a server speaks.) A stream that ends while the upstream stays ready (a
// remote server restarted quickly) is opened again with backoff; when it is acknowledged again, `resync`
// runs, because changes made while nobody listened were missed.
import { withoutCapabilityLinks } from '../../protocol/capability-links.js';
import type { Upstream, UpstreamState } from '../../bridge/upstream.js';
import { ErrorCode, errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
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
  const watch = new ListenWatch(upstream, log, resync, resources);
  upstream.events.on('state', watch.onState);
  if (upstream.status().state === 'ready') watch.onState('ready');
  return watch;
}

/** The stream to one upstream: opened while it is ready, opened again with backoff when it ends. */
class ListenWatch implements UpstreamWatch {
  private open: AbortController | undefined;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = RETRY_FIRST_MS;
  private stopped = false;
  private acknowledgedBefore = false;

  constructor(
    private readonly upstream: Upstream,
    private readonly log: Log,
    private readonly resync: () => void,
    private readonly resources: () => readonly string[],
  ) {}

  readonly onState = (state: UpstreamState): void => {
    if (state === 'ready') {
      this.retryMs = RETRY_FIRST_MS;
      if (!this.open && this.wanted()) this.listen();
    } else {
      clearTimeout(this.retry);
      this.open?.abort();
      this.open = undefined;
    }
  };

  resourcesChanged(): void {
    if (!this.open) return; // the next stream picks them up
    // Replacing the stream is the only way to change its filter; the new one is acknowledged like any.
    this.open.abort();
    this.open = undefined;
    this.acknowledgedBefore = false;
    if (this.wanted()) this.listen();
  }

  stop(): void {
    this.stopped = true;
    this.upstream.events.off('state', this.onState);
    clearTimeout(this.retry);
    this.open?.abort();
  }

  private wanted(): boolean {
    return !this.stopped && this.upstream.status().state === 'ready';
  }

  private listen(): void {
    const controller = (this.open = new AbortController());
    const request = listenRequest(this.upstream.name, this.resources());
    const onNotification = (notification: { method: string }): void => {
      if (notification.method !== 'notifications/subscriptions/acknowledged') return;
      this.retryMs = RETRY_FIRST_MS;
      if (this.acknowledgedBefore) this.resync();
      this.acknowledgedBefore = true;
    };
    // An upstream that throws instead of answering (a bug) ends the stream like an error answer: retried
    // with backoff, and no rejection left unhandled, which would end the gateway's process.
    const thrown = (error: unknown) =>
      errorResponse(request.id, ErrorCode.InternalError, `the listen request threw: ${String(error)}`);
    void this.upstream
      .request(request, { signal: controller.signal, onNotification })
      .then(undefined, thrown)
      .then((response) => this.ended(controller, response));
  }

  /** The stream ended: it is opened again after a backoff, unless it was replaced or the upstream has no listen. */
  private ended(controller: AbortController, response: JsonRpcResponse): void {
    if (controller.signal.aborted || this.open !== controller) return;
    this.open = undefined;
    if ('error' in response && response.error.code === ErrorCode.MethodNotFound) {
      this.log.warn({}, 'upstream does not serve subscriptions/listen; its list changes will not be heard');
      return;
    }
    this.log.info(
      {
        answer: 'error' in response ? withoutCapabilityLinks(response.error.message) : 'ended',
        retryInMs: this.retryMs,
      },
      'upstream closed its subscriptions/listen stream; opening it again',
    );
    this.retry = setTimeout(() => {
      if (!this.open && this.wanted()) this.listen();
    }, this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
  }
}

/** The gateway's own listen request: every list change, and the resources its clients watch. */
function listenRequest(server: string, uris: readonly string[]): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id: `gateway-listen-${server}`,
    method: 'subscriptions/listen',
    params: {
      notifications: uris.length ? { ...FILTER, resourceSubscriptions: [...uris] } : FILTER,
      _meta: ownRequestMeta(),
    },
  };
}
