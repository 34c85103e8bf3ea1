// MRTR across replicas: the calls this replica holds while waiting for a client's retry, and how a retry
// that lands on the wrong replica finds the one holding its call (through Redis, when configured). The
// object itself is what the edge routes retries with (src/edge/retry-routing.ts names the part it reads:
// instance, holderOf, lookup, trust); it takes its settings as the narrow types below, never the whole
// config, so src/mrtr imports neither the config nor the edge.
import { randomBytes } from 'node:crypto';
import type { Log } from '../../infra/log.js';
import type { SentinelSettings } from '../../infra/redis-fail-fast.js';
import { cancelWaitingCalls, type HeldCalls } from './held-call.js';
import type { InstanceRegistry } from './instance-registry.js';
import { PeerTrust } from './peer-trust.js';
import { peerChecker, type PeerCheck } from './peers.js';
import { RequestStateCodec } from './request-state.js';

/** The `mrtr` settings read here (they need a restart to change, so the starting ones stay right). */
export interface RetrySettings {
  /** Signs request states; random per start when absent (they then open only in this process). */
  secret?: string;
  holdMs: number;
  /** How many calls one caller may hold waiting for its answers at once. */
  maxHeldPerCaller: number;
  /** How long a call waits behind another caller's held call on the same 2025 stdio server. */
  queueMs: number;
  /** Where other replicas reach this one (default: the listen address). */
  internalUrl?: string;
  peers: readonly string[];
}

/** Where replicas find each other: Redis when `store` is redis, nowhere otherwise. */
export interface RetryRegistrySettings {
  store: 'memory' | 'redis';
  url: string;
  sentinel?: SentinelSettings;
  keyPrefix: string;
}

export class HeldCallRetries {
  readonly held: HeldCalls;
  /** Signs and opens the header a replica vouches for a forward's caller with. */
  readonly trust: PeerTrust;
  private readonly peerAllowed: PeerCheck;
  /** Set once this replica listens (its address is what it registers); undefined without Redis. */
  private registry: InstanceRegistry | undefined;

  constructor(
    private readonly mrtr: RetrySettings,
    private readonly registrySettings: RetryRegistrySettings,
    private readonly log: Log,
  ) {
    const mrtrSecret = mrtr.secret ? Buffer.from(mrtr.secret) : randomBytes(32);
    this.trust = new PeerTrust(mrtrSecret);
    this.peerAllowed = peerChecker(mrtr.peers);
    this.held = {
      codec: new RequestStateCodec(mrtrSecret, randomBytes(6).toString('base64url')),
      calls: new Map(),
      holdMs: mrtr.holdMs,
      maxHeldPerCaller: mrtr.maxHeldPerCaller,
      queueMs: mrtr.queueMs,
      shared: registrySettings.store === 'redis',
    };
  }

  /** This replica's id, as its request states carry it. */
  get instance(): string {
    return this.held.codec.instance;
  }

  /** The instance holding the call a requestState names, when the token is ours and names another one. */
  holderOf(token: string): string | undefined {
    const opened = this.held.codec.open(token);
    return opened.ok && opened.state.instance !== this.instance ? opened.state.instance : undefined;
  }

  /** A verified registry address for `instance` that mrtr.peers allows, or undefined. */
  async lookup(instance: string): Promise<string | undefined> {
    const found = await this.registry?.lookup(instance);
    if (found === undefined || this.peerAllowed(found)) return found;
    this.log.warn(
      { instance, url: found },
      'not forwarding a retry to an address mrtr.peers does not allow (by default: loopback and private addresses)',
    );
    return undefined;
  }

  /** With Redis, replicas find each other: a retry landing on the wrong one is forwarded to its call's holder. */
  async register(url: string): Promise<void> {
    const { store, ...redis } = this.registrySettings;
    if (store !== 'redis') return;
    const { InstanceRegistry } = await import('./instance-registry.js');
    this.registry = await InstanceRegistry.create({
      url: redis.url,
      sentinel: redis.sentinel,
      keyPrefix: redis.keyPrefix,
      instance: this.instance,
      internalUrl: this.mrtr.internalUrl ?? url,
      trust: this.trust,
      log: this.log.child({ part: 'instances' }),
    });
  }

  /**
   * No retry can reach this replica any more: its held calls that wait for one end here, and other replicas
   * stop offering it retries (they answer that the holder is gone; the client starts the call again).
   */
  async withdraw(): Promise<void> {
    const abandoned = cancelWaitingCalls(this.held);
    if (abandoned > 0)
      this.log.info(
        { calls: abandoned },
        'draining: cancelled the calls held for a client retry that can no longer reach this replica',
      );
    await this.registry?.forget();
  }

  close(): void {
    this.registry?.close();
  }
}
