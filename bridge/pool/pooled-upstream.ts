// `instances: N` on a stdio server: N children of the same command behind one Upstream. Each request goes to
// the least busy ready child (fewest requests outstanding; ties taken in turn), so a single-threaded,
// CPU-bound server gets as many cores as it has children. Every child keeps its own supervisor (backoff,
// crash window, restarts); the pool is ready while any child is, and reports each one in its status.
// Only for servers whose requests are independent of each other: the config allows it for a modern server,
// and for a 2025 one only when asked for with era: legacy (docs/configuration.md: instances).
import { EventEmitter } from 'node:events';
import type { Log } from '../../infra/log.js';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { ChildStatus, RequestOptions, Upstream, UpstreamState, UpstreamStatus } from '../upstream.js';
import { ListChangeDedupe } from './list-change-dedupe.js';
import { openPoolListen } from './pool-listen.js';
import { RetryAffinity } from './retry-affinity.js';

/** The pool's state is its best child's: one ready child serves. */
const BEST_FIRST: readonly UpstreamState[] = ['ready', 'starting', 'backing-off', 'unhealthy', 'stopped'];

export class PooledUpstream implements Upstream {
  readonly events = new EventEmitter();
  /** Each child's state as its last 'state' event said: read per request, so kept rather than asked. */
  private readonly states: UpstreamState[];
  /** Requests each child is serving (listen streams left out: they stay open and cost nothing). */
  private readonly inFlight: number[];
  /** Where the next search for the least busy child starts, so that ties are taken in turn. */
  private nextTie = 0;
  private state: UpstreamState;
  private readonly listChanges = new ListChangeDedupe();
  private readonly affinity = new RetryAffinity();

  constructor(
    readonly name: string,
    private readonly children: readonly Upstream[],
    private readonly log: Log,
  ) {
    if (children.length < 2) throw new Error('a pool needs at least two children; serve one child without a pool');
    this.states = children.map((child) => child.status().state);
    this.inFlight = children.map(() => 0);
    this.state = this.bestState();
    children.forEach((child, index) => {
      child.events.on('state', (state: UpstreamState) => this.childState(index, state));
      child.events.on('listChanged', (notification: JsonRpcNotification) => {
        if (this.listChanges.shouldPass(notification.method)) this.events.emit('listChanged', notification);
      });
    });
  }

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    if (message.method === 'subscriptions/listen') return openPoolListen(this.children, message, options);
    this.listChanges.sending(message.method);
    return this.send(this.choose(message), message, options);
  }

  status(): UpstreamStatus {
    const children: ChildStatus[] = this.children.map((child, index) => ({
      ...child.status(),
      inFlight: this.inFlight[index]!,
    }));
    let restarts = 0;
    for (const child of children) restarts += child.restarts;
    const era = children.find((child) => child.era !== undefined)?.era;
    const lastError =
      this.state === 'ready' ? undefined : children.find((child) => child.lastError !== undefined)?.lastError;
    return { state: this.state, era, restarts, lastError, children };
  }

  async start(): Promise<void> {
    await Promise.all(this.children.map((child) => child.start()));
  }

  async close(): Promise<void> {
    await Promise.all(this.children.map((child) => child.close()));
  }

  private async send(index: number, message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    this.inFlight[index]!++;
    try {
      const response = await this.children[index]!.request(message, options);
      this.affinity.learn(response, index);
      return response;
    } finally {
      this.inFlight[index]!--;
    }
  }

  /** A retry goes back to the child that asked, while it is ready; anything else to the least busy child. */
  private choose(message: JsonRpcRequest): number {
    const asked = this.affinity.childFor(message);
    if (asked !== undefined && this.states[asked] === 'ready') return asked;
    return this.leastBusy();
  }

  /**
   * The ready child with the fewest requests outstanding, searching from `nextTie` so equal ones take turns.
   * With none ready, one that is starting or backing off (the request waits for it, as a single child's
   * would); with none of those either, any child, whose refusal says why (unhealthy, stopped).
   */
  private leastBusy(): number {
    const count = this.children.length;
    let ready = -1;
    let readyLoad = Number.POSITIVE_INFINITY;
    let waiting = -1;
    let waitingLoad = Number.POSITIVE_INFINITY;
    for (let step = 0; step < count; step++) {
      const index = (this.nextTie + step) % count;
      const load = this.inFlight[index]!;
      const state = this.states[index];
      if (state === 'ready') {
        if (load < readyLoad) {
          ready = index;
          readyLoad = load;
        }
      } else if ((state === 'starting' || state === 'backing-off') && load < waitingLoad) {
        waiting = index;
        waitingLoad = load;
      }
    }
    const chosen = ready >= 0 ? ready : waiting >= 0 ? waiting : this.nextTie;
    this.nextTie = (chosen + 1) % count;
    return chosen;
  }

  private childState(index: number, state: UpstreamState): void {
    const before = this.states[index];
    this.states[index] = state;
    if (before === 'ready' && state !== 'ready' && state !== 'stopped')
      this.log.warn({ child: index, state }, 'pool child not ready; its siblings serve meanwhile');
    const pool = this.bestState();
    if (pool === this.state) return;
    this.state = pool;
    this.events.emit('state', pool);
  }

  private bestState(): UpstreamState {
    for (const state of BEST_FIRST) if (this.states.includes(state)) return state;
    return 'stopped';
  }
}
