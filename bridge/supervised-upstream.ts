// What the stdio and HTTP upstreams share as Upstreams: a name, one Supervisor for their lifecycle (whose
// events are the upstream's), and the era the server speaks once known (set by config, or found out).
import type { EventEmitter } from 'node:events';
import type { Log } from '../infra/log.js';
import type { BackoffPolicy } from './backoff.js';
import { Supervisor } from './supervisor.js';
import type { Era, RequestOptions, Upstream, UpstreamStatus } from './upstream.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../protocol/jsonrpc.js';

export interface SupervisedConfig {
  name: string;
  era: Era | 'auto';
  backoff: BackoffPolicy;
}

export abstract class SupervisedUpstream implements Upstream {
  readonly name: string;
  readonly events: EventEmitter;
  protected readonly supervisor: Supervisor;
  /** Undefined until the server said which era it speaks (an `auto` config). */
  protected era: Era | undefined;

  constructor(
    config: SupervisedConfig,
    protected readonly log: Log,
  ) {
    this.name = config.name;
    this.supervisor = new Supervisor(config.backoff, log);
    this.events = this.supervisor.events;
    if (config.era !== 'auto') this.era = config.era;
  }

  status(): UpstreamStatus {
    return this.supervisor.status(this.era);
  }

  abstract request(message: JsonRpcRequest, options?: RequestOptions): Promise<JsonRpcResponse>;
  abstract start(): Promise<void>;
  abstract close(): Promise<void>;
}
