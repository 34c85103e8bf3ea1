// MRTR across replicas: the calls this replica holds while waiting for a client's retry, and how a retry
// that lands on the wrong replica finds the one holding its call (through Redis, when configured).
import { randomBytes } from 'node:crypto';
import type { GatewayConfig } from '../config/config.js';
import type { RetryRouting } from '../edge/app.js';
import type { Log } from '../../infra/log.js';
import { cancelWaitingCalls, type HeldCalls } from '../mrtr/input-bridge.js';
import type { InstanceRegistry } from '../mrtr/instance-registry.js';
import { PeerTrust } from '../mrtr/peer-trust.js';
import { peerChecker, type PeerCheck } from '../mrtr/peers.js';
import { RequestStateCodec } from '../mrtr/request-state.js';

export class HeldCallRetries {
  readonly held: HeldCalls;
  private readonly trust: PeerTrust;
  private readonly peerAllowed: PeerCheck;
  /** Set once this replica listens (its address is what it registers); undefined without Redis. */
  private registry: InstanceRegistry | undefined;

  constructor(
    /** The sections read here need a restart to change, so the starting config stays right. */
    private readonly config: Pick<GatewayConfig, 'mrtr' | 'cache'>,
    private readonly log: Log,
  ) {
    // Without mrtr.secret, a random one: request states then open only in this process.
    const mrtrSecret = config.mrtr.secret ? Buffer.from(config.mrtr.secret) : randomBytes(32);
    this.trust = new PeerTrust(mrtrSecret);
    this.peerAllowed = peerChecker(config.mrtr.peers);
    this.held = {
      codec: new RequestStateCodec(mrtrSecret, randomBytes(6).toString('base64url')),
      calls: new Map(),
      holdMs: config.mrtr.holdMs,
      maxHeldPerCaller: config.mrtr.maxHeldPerCaller,
      queueMs: config.mrtr.queueMs,
      shared: config.cache.store === 'redis',
    };
  }

  /** What the edge needs to send a retry on to the replica holding its call. */
  routing(): RetryRouting {
    const { codec } = this.held;
    return {
      instance: codec.instance,
      holderOf: (token) => {
        const opened = codec.open(token);
        return opened.ok && opened.state.instance !== codec.instance ? opened.state.instance : undefined;
      },
      lookup: async (instance) => {
        const found = await this.registry?.lookup(instance);
        if (found === undefined || this.peerAllowed(found)) return found;
        this.log.warn({ instance, url: found }, 'not forwarding a retry to an address mrtr.peers does not allow (by default: loopback and private addresses)');
        return undefined;
      },
      trust: this.trust,
    };
  }

  /** With Redis, replicas find each other: a retry landing on the wrong one is forwarded to its call's holder. */
  async register(url: string): Promise<void> {
    const { cache, mrtr } = this.config;
    if (cache.store !== 'redis') return;
    const { InstanceRegistry } = await import('../mrtr/instance-registry.js');
    this.registry = await InstanceRegistry.create({
      url: cache.url,
      sentinel: cache.sentinel,
      keyPrefix: cache.keyPrefix,
      instance: this.held.codec.instance,
      internalUrl: mrtr.internalUrl ?? url,
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
    if (abandoned > 0) this.log.info({ calls: abandoned }, 'draining: cancelled the calls held for a client retry that can no longer reach this replica');
    await this.registry?.forget();
  }

  close(): void {
    this.registry?.close();
  }
}
