// A 2025 session's traffic between replicas, so no load balancer has to be sticky. A 2025 client POSTs to
// whichever replica the balancer picks, but its GET stream and the questions the gateway asked on a call's
// stream live in one process. With Redis, each session has a channel (`<keyPrefix>session:<id>`) that the
// process holding its GET stream or a pending question subscribes to; a replica that receives what belongs
// there (the client's answer, a resources/subscribe) publishes it. The session's resource subscriptions
// are also kept in a Redis set that expires with the session, so a GET stream opened later, anywhere,
// starts with them. Ended sessions (DELETE) are announced to every replica on one channel and kept in a
// sorted set, read again whenever the subscriber (re)connects.
//
// Messages are HMAC-signed with a key derived from legacyClients.sessionSecret: whoever can write to Redis
// still cannot answer a user's elicitation. Nothing here carries the client's credentials.
// Redis being down fails each command at once (fail-fast options); callers decide what that means.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { isObject, type JsonObject } from '../protocol/jsonrpc.js';
import type { Log } from '../protocol/log.js';
import { failFastRedisOptions, sentinelOptions, type SentinelSettings } from '../protocol/redis-fail-fast.js';

export type SessionEvent =
  /** The client's answer to a request the gateway sent it on a call's stream. */
  | { kind: 'answer'; message: JsonObject }
  | { kind: 'subscribe' | 'unsubscribe'; uri: string }
  /** The relay (re)connected: events may have been missed, so read the shared state again. */
  | { kind: 'resync' };

export interface SessionRelayHandlers {
  event(session: string, event: SessionEvent): void;
  ended(session: string, expiresAt: number): void;
}

export class SessionRelay {
  private readonly client: Redis;
  private readonly subscriber: Redis;
  private readonly key: Buffer;
  private readonly endedChannel: string;
  private readonly endedKey: string;
  /** Sessions this process listens for: how many reasons it has, and the SUBSCRIBE in progress. */
  private readonly watched = new Map<string, { count: number; subscribed: Promise<void> }>();
  private handlers: SessionRelayHandlers | undefined;
  private readonly where: string;
  private down = false;

  constructor(private readonly options: { url: string; sentinel?: SentinelSettings; keyPrefix: string; secret: Buffer; log: Log }) {
    this.key = createHash('sha256').update('mcp-gateway legacy relay\0').update(options.secret).digest();
    this.endedChannel = `${options.keyPrefix}sessions:ended`;
    this.endedKey = `${options.keyPrefix}sessions:ended`;
    this.where = describe(options.url);
    const sentinel = sentinelOptions(options.sentinel, options.url);
    this.client = new Redis(options.url, { ...failFastRedisOptions('mcp-gateway-sessions'), ...sentinel } satisfies RedisOptions);
    // Subscriptions are made again on every 'ready' below (also after a first attempt that failed).
    this.subscriber = new Redis(options.url, { ...failFastRedisOptions('mcp-gateway-sessions-sub'), ...sentinel, autoResubscribe: false } satisfies RedisOptions);
    this.client.on('error', (error: Error) => this.lost(error));
    this.subscriber.on('error', (error: Error) => this.lost(error));
    this.subscriber.on('ready', () => void this.resubscribe());
    this.subscriber.on('message', (channel: string, text: string) => this.heard(channel, text));
  }

  attach(handlers: SessionRelayHandlers): void {
    this.handlers = handlers;
  }

  /**
   * Listens to `session`'s channel until the returned function is called (counted: several reasons may
   * hold it). Resolves once Redis confirmed, or once it failed (logged; the 'ready' handler tries again).
   */
  async watch(session: string): Promise<() => void> {
    let entry = this.watched.get(session);
    if (entry) entry.count++;
    else this.watched.set(session, (entry = { count: 1, subscribed: this.subscribe(session) }));
    await entry.subscribed;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const current = this.watched.get(session);
      if (!current || --current.count > 0) return;
      this.watched.delete(session);
      this.subscriber.unsubscribe(this.channelOf(session)).catch(() => {});
    };
  }

  /** Sends `event` to whichever replicas watch `session`; resolves with how many heard it. Rejects when Redis is unreachable. */
  async publish(session: string, event: SessionEvent): Promise<number> {
    return this.command(() => this.client.publish(this.channelOf(session), this.sign(session, JSON.stringify(event))));
  }

  /** Records a resource subscription of `session` (kept until the session expires). */
  async addSubscription(session: string, uri: string, expiresAt: number): Promise<void> {
    await this.command(() => this.client.multi().sadd(this.subscriptionsOf(session), uri).pexpireat(this.subscriptionsOf(session), expiresAt).exec());
  }

  async removeSubscription(session: string, uri: string): Promise<void> {
    await this.command(() => this.client.srem(this.subscriptionsOf(session), uri));
  }

  async subscriptions(session: string): Promise<string[]> {
    return this.command(() => this.client.smembers(this.subscriptionsOf(session)));
  }

  /** Tells every replica that `session` ended (DELETE), and forgets its subscriptions. */
  async end(session: string, expiresAt: number): Promise<void> {
    const now = Date.now();
    await this.command(() =>
      this.client
        .multi()
        .del(this.subscriptionsOf(session))
        .zadd(this.endedKey, expiresAt, session)
        .zremrangebyscore(this.endedKey, '-inf', now) // pruned here, so it holds only sessions not yet expired
        .publish(this.endedChannel, this.sign('', JSON.stringify({ session, expiresAt })))
        .exec(),
    );
  }

  async close(): Promise<void> {
    this.handlers = undefined;
    this.watched.clear();
    this.client.disconnect();
    this.subscriber.disconnect();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private channelOf(session: string): string {
    return `${this.options.keyPrefix}session:${session}`;
  }

  private subscriptionsOf(session: string): string {
    return `${this.options.keyPrefix}session:${session}:subscriptions`;
  }

  private async subscribe(session: string): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channelOf(session));
    } catch (error) {
      this.lost(error);
    }
  }

  /** (Re)connected: listen again to everything watched, learn the sessions ended meanwhile, and say events may have been missed. */
  private async resubscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.endedChannel, ...[...this.watched.keys()].map((session) => this.channelOf(session)));
      const ended = await this.client.zrangebyscore(this.endedKey, Date.now(), '+inf', 'WITHSCORES');
      for (let i = 0; i + 1 < ended.length; i += 2) this.handlers?.ended(ended[i]!, Number(ended[i + 1]));
    } catch (error) {
      return this.lost(error);
    }
    if (this.down) this.options.log.info({ redis: this.where }, 'Redis reachable again: 2025 sessions are shared between replicas again');
    this.down = false;
    for (const session of this.watched.keys()) this.handlers?.event(session, { kind: 'resync' });
  }

  private async command<T>(run: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await run();
    } catch (error) {
      this.lost(error);
      throw new Error(`Redis at ${this.where} is unreachable (${error instanceof Error ? error.message : String(error)})`);
    }
    if (this.down) {
      this.down = false;
      this.options.log.info({ redis: this.where }, 'Redis reachable again: 2025 sessions are shared between replicas again');
    }
    return result;
  }

  private lost(error: unknown): void {
    if (this.down) return;
    this.down = true;
    this.options.log.warn(
      { redis: this.where, err: error instanceof Error ? error.message : String(error) },
      'Redis unreachable: 2025 sessions are served only where their GET stream and questions are until it is back',
    );
  }

  private heard(channel: string, text: string): void {
    const handlers = this.handlers;
    if (!handlers) return;
    const session = channel === this.endedChannel ? '' : channel.slice(this.channelOf('').length);
    const parsed = this.verified(session, text);
    if (!isObject(parsed)) return;
    if (channel === this.endedChannel) {
      if (typeof parsed.session === 'string' && typeof parsed.expiresAt === 'number') handlers.ended(parsed.session, parsed.expiresAt);
      return;
    }
    if (parsed.kind === 'answer' && isObject(parsed.message)) handlers.event(session, { kind: 'answer', message: parsed.message });
    else if ((parsed.kind === 'subscribe' || parsed.kind === 'unsubscribe') && typeof parsed.uri === 'string') handlers.event(session, { kind: parsed.kind, uri: parsed.uri });
  }

  /** `<hmac>.<json>`, the HMAC over the session id and the JSON: a message cannot be moved to another session. */
  private sign(session: string, json: string): string {
    return `${this.mac(session, json)}.${json}`;
  }

  private verified(session: string, text: string): unknown {
    const dot = text.indexOf('.');
    if (dot < 0) return undefined;
    const json = text.slice(dot + 1);
    const given = Buffer.from(text.slice(0, dot), 'base64url');
    const expected = Buffer.from(this.mac(session, json), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      this.options.log.warn({ session }, 'ignored a 2025 session message with a bad signature: do all replicas share legacyClients.sessionSecret?');
      return undefined;
    }
    try {
      return JSON.parse(json);
    } catch {
      return undefined;
    }
  }

  private mac(session: string, json: string): string {
    return createHmac('sha256', this.key).update(session).update('\0').update(json).digest('base64url');
  }
}

/** host:port of the URL, without credentials, for logs and errors. */
function describe(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return 'redis';
  }
}
