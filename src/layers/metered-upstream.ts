// Times each request a server's upstream answers and hands the outcome to the server's meter
// (upstream-metrics.ts). It sits right on the upstream, below the limits: queue waits are not upstream time,
// and capacity refusals (counted by upstream_refused_total) never reach it. Costs two performance.now() and
// one `.then` (with its small closure) per request.
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { UpstreamWrapper } from './upstream-wrapper.js';
import type { ServerMeter } from '../ops/index.js';

export class MeteredUpstream extends UpstreamWrapper {
  constructor(
    inner: Upstream,
    private readonly meter: ServerMeter,
  ) {
    super(inner);
  }

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    const started = performance.now();
    return this.inner.request(message, options).then((response) => {
      this.meter.finished(message, response, started, options.traceId, options.signal?.aborted === true);
      return response;
    });
  }
}
