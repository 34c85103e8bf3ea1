// subscriptions/listen on a pool: one stream to every child while it is ready, for as long as the caller
// keeps the pool's stream open. Every child may announce a list change (ListChangeDedupe keeps the server's
// cache from dropping them N times); resource subscriptions go to one child only, the holder — the first
// ready child, kept while it stays ready — so an update arrives once. When the holder goes down the next
// ready child takes the subscriptions; its stream is acknowledged again, which tells the listener that
// updates may have been missed meanwhile (the same resync a single restarted child causes).
import { cancelledResponse } from '../../protocol/cancel.js';
import {
  ErrorCode,
  isObject,
  type JsonObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { RequestOptions, Upstream, UpstreamState } from '../upstream.js';

const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

export function openPoolListen(
  children: readonly Upstream[],
  message: JsonRpcRequest,
  options: RequestOptions,
): Promise<JsonRpcResponse> {
  return new Promise((resolve) => new PoolListen(children, message, options, resolve).begin());
}

class PoolListen {
  private readonly streams: (AbortController | undefined)[];
  private readonly ackedBefore: boolean[];
  private readonly unsupported = new Set<number>();
  private readonly stateListeners: ((state: UpstreamState) => void)[];
  private readonly withResources: JsonObject;
  private readonly withoutResources: JsonObject;
  private readonly wantsResources: boolean;
  private anyAcked = false;
  private holder = -1;
  private done = false;

  constructor(
    private readonly children: readonly Upstream[],
    private readonly message: JsonRpcRequest,
    private readonly options: RequestOptions,
    private readonly resolve: (response: JsonRpcResponse) => void,
  ) {
    this.streams = children.map(() => undefined);
    this.ackedBefore = children.map(() => false);
    const asked = isObject(message.params?.notifications) ? message.params.notifications : {};
    const { resourceSubscriptions, ...lists } = asked;
    this.wantsResources = Array.isArray(resourceSubscriptions) && resourceSubscriptions.length > 0;
    this.withResources = asked;
    this.withoutResources = lists;
    this.stateListeners = children.map((_, index) => (state: UpstreamState) => this.childState(index, state));
  }

  begin(): void {
    const signal = this.options.signal;
    if (signal?.aborted) return this.finish(cancelledResponse(this.message.id));
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.options.onStreamStart?.();
    this.children.forEach((child, index) => {
      child.events.on('state', this.stateListeners[index]!);
    });
    this.holder = this.pickHolder();
    for (let index = 0; index < this.children.length; index++) this.open(index);
  }

  private readonly onAbort = (): void => this.finish(cancelledResponse(this.message.id));

  private ready(index: number): boolean {
    return this.children[index]!.status().state === 'ready';
  }

  /** The holder stays while it is ready; otherwise the first ready child (none: -1). */
  private pickHolder(): number {
    if (this.holder >= 0 && this.ready(this.holder)) return this.holder;
    return this.children.findIndex((_, index) => this.ready(index));
  }

  private childState(index: number, state: UpstreamState): void {
    if (this.done) return;
    if (state !== 'ready') this.close(index);
    const holder = this.pickHolder();
    if (holder !== this.holder) {
      const before = this.holder;
      this.holder = holder;
      if (this.wantsResources && before >= 0) this.reopen(before);
      if (this.wantsResources && holder >= 0 && holder !== index) this.reopen(holder);
    }
    if (state === 'ready') this.open(index);
  }

  private reopen(index: number): void {
    this.close(index);
    this.open(index);
  }

  private close(index: number): void {
    const stream = this.streams[index];
    this.streams[index] = undefined;
    stream?.abort();
  }

  private open(index: number): void {
    if (this.done || this.streams[index] || this.unsupported.has(index) || !this.ready(index)) return;
    const controller = new AbortController();
    this.streams[index] = controller;
    const notifications = index === this.holder && this.wantsResources ? this.withResources : this.withoutResources;
    const request: JsonRpcRequest = { ...this.message, params: { ...this.message.params, notifications } };
    const onNotification = (notification: JsonRpcNotification): void => this.relay(index, notification);
    void this.children[index]!.request(request, { signal: controller.signal, onNotification }).then((response) => {
      if (this.streams[index] === controller) this.streams[index] = undefined;
      if (this.done || controller.signal.aborted) return;
      if ('error' in response && response.error.code === ErrorCode.MethodNotFound) {
        this.unsupported.add(index);
        if (this.unsupported.size === this.children.length) this.finish(response);
        return;
      }
      // A child that went down is opened again when it is ready (childState). One that closed its stream
      // while up ends the pool's: its listener opens it again, with its own backoff.
      if (this.ready(index)) this.finish(response);
    });
  }

  /** One acknowledgement reaches the listener, and again whenever a child that had acknowledged does so anew. */
  private relay(index: number, notification: JsonRpcNotification): void {
    if (notification.method === ACKNOWLEDGED) {
      const pass = this.ackedBefore[index] || !this.anyAcked;
      this.ackedBefore[index] = true;
      this.anyAcked = true;
      if (!pass) return;
    }
    this.options.onNotification?.(notification);
  }

  private finish(response: JsonRpcResponse): void {
    if (this.done) return;
    this.done = true;
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.children.forEach((child, index) => {
      child.events.off('state', this.stateListeners[index]!);
    });
    for (let index = 0; index < this.streams.length; index++) this.close(index);
    this.resolve(response);
  }
}
