// An Upstream in front of another that passes everything through but requests: the base of the layers
// (cache, MRTR bridge) stacked on each server's upstream.
import type { RequestOptions, Upstream, UpstreamStatus } from '../../bridge/upstream.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';

export abstract class UpstreamWrapper implements Upstream {
  constructor(protected readonly inner: Upstream) {}

  get name(): string {
    return this.inner.name;
  }

  get events(): Upstream['events'] {
    return this.inner.events;
  }

  status(): UpstreamStatus {
    return this.inner.status();
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  abstract request(message: JsonRpcRequest, options?: RequestOptions): Promise<JsonRpcResponse>;
}
