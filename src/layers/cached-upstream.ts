// An upstream with the list cache in front: cacheable requests (lists, discover, resources/read) are
// answered from the cache while their ttlMs lasts; everything else, and every retry of a multi round-trip
// request, goes straight through.
import type { ListCache } from '../../cache/list-cache.js';
import { optionsWith } from '../../bridge/request-options.js';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import { cancelledResponse } from '../../protocol/cancel.js';
import { ErrorCode, errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { CACHEABLE_METHODS } from '../../protocol/mcp.js';
import { UpstreamWrapper } from './upstream-wrapper.js';
import { textOf } from '../../protocol/exact-json.js';

export const ANONYMOUS = 'anonymous';

export class CachedUpstream extends UpstreamWrapper {
  private inFlight = 0;
  private idle: (() => void) | undefined;

  constructor(
    inner: Upstream,
    private readonly cache: ListCache,
  ) {
    super(inner);
  }

  /** The upstream without this cache: for what must be read as the server says it now (a pinned tool's definition). */
  get uncached(): Upstream {
    return this.inner;
  }

  /** Resolves true once no request is in flight here, or false when `ms` passed first (a reload retiring it). */
  drained(ms: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.idle = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    this.inFlight++;
    // A call (most traffic) goes straight through, counted out by two functions made once, not per call.
    let answered: Promise<JsonRpcResponse>;
    try {
      answered = cacheable(message) ? this.fromCache(message, options) : this.inner.request(message, options);
    } catch (error) {
      // An upstream that throws instead of rejecting must still be counted out, or drain would wait for ever.
      answered = Promise.reject(error);
    }
    return answered.then(this.settled, this.settledAfterThrow);
  }

  private readonly settled = (response: JsonRpcResponse): JsonRpcResponse => {
    if (--this.inFlight === 0) this.idle?.();
    return response;
  };

  private readonly settledAfterThrow = (error: unknown): never => {
    if (--this.inFlight === 0) this.idle?.();
    throw error;
  };

  private async fromCache(message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    const params = message.params;
    const variant =
      message.method === 'resources/read'
        ? textOf(params?.uri)
        : typeof params?.cursor === 'string'
          ? params.cursor
          : '';
    const key = {
      upstream: this.inner.name,
      method: message.method,
      variant,
      context: options.authContext ?? ANONYMOUS,
    };
    // Others may wait on this fetch (single flight): one caller going away must not cancel it for them,
    // but that caller stops waiting (and stops counting as in flight) at once.
    const fetched = this.cache.get(key, message.id, () => this.inner.request(message, optionsWith(options, undefined)));
    const trace = options.trace;
    if (trace !== undefined)
      void fetched.then(
        ({ hit }) => trace.event('mcp.gateway.cache', { 'mcp.gateway.cache.hit': hit }),
        () => undefined,
      );
    const signal = options.signal;
    if (!signal) return (await fetched).response;
    if (signal.aborted) return cancelledResponse(message.id);
    return new Promise<JsonRpcResponse>((resolve) => {
      const gone = (): void => resolve(cancelledResponse(message.id));
      signal.addEventListener('abort', gone, { once: true });
      void fetched.then(
        ({ response }) => {
          signal.removeEventListener('abort', gone);
          resolve(response);
        },
        (error: Error) => resolve(errorResponse(message.id, ErrorCode.InternalError, `mcp-gateway: ${error.message}`)),
      );
    });
  }
}

/** A list, discover or resources/read that is not an MRTR retry: what the cache answers. */
function cacheable(message: JsonRpcRequest): boolean {
  const params = message.params;
  return CACHEABLE_METHODS.has(message.method) && !(params && ('inputResponses' in params || 'requestState' in params));
}
