// A 2025 session's traffic between replicas, so no load balancer has to be sticky. A 2025 client POSTs to
// whichever replica the balancer picks, but its GET stream and the questions the gateway asked on a call's
// stream live in one process. With Redis, each session has a channel (`<keyPrefix>session:<id>`) that the
// process holding its GET stream or a pending question subscribes to; a replica that receives what belongs
// there (the client's answer, a resources/subscribe) publishes it. The session's resource subscriptions
// are also kept in a Redis set that expires with the session, so a GET stream opened later, anywhere,
// starts with them. Ended sessions (DELETE) are announced to every replica on one channel and kept in a
// sorted set, read again whenever the connections (re)connect.
//
// Redis is trusted for availability only. What goes through it is keyed by legacyClients.sessionSecret:
// channel messages are sealed (AES-256-GCM, bound to their session), because answers carry what users
// typed into elicitation forms and what their models wrote; subscription entries and ended sessions are
// signed (HMAC), so whoever can write to Redis can neither answer a user's elicitation, read it, subscribe
// a session to anything, nor end someone else's session. (They can still delete, delay or replay what is
// there.) Nothing here carries the client's credentials.
// Redis being down fails each command at once (fail-fast options); callers decide what that means.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { parseJson } from '../../protocol/exact-json.js';
import { isObject, type JsonObject } from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import {
  describeRedisUrl,
  failFastRedisOptions,
  PAUSE_MS,
  sentinelOptions,
  type SentinelSettings,
} from '../../infra/redis-fail-fast.js';
import { OutageLog } from '../../infra/redis-outage.js';
import { UpgradingSealer } from './sealer-v1.js';

export type SessionEvent =
  /** The client's answer to a request the gateway sent it on a call's stream. */
  | { kind: 'answer'; message: JsonObject }
  | { kind: 'subscribe' | 'unsubscribe'; uri: string }
  /** The relay (re)connected: events may have been missed, so read the shared state again. */
  | { kind: 'resync' };

export interface EndedSession {
  session: string;
  expiresAt: number;
}

export interface SessionRelayHandlers {
  event(session: string, event: SessionEvent): void;
  /**
   * Sessions ended by DELETE: one as it is announced, or every one still live when catching up. At least
   * once: a DELETE announced while a catch-up reads the set is heard both ways, so ending must be idempotent.
   */
  ended(sessions: readonly EndedSession[]): void;
}

export class SessionRelay {
  private readonly client: Redis;
  private readonly subscriber: Redis;
  private readonly sealer: UpgradingSealer;
  private readonly macKey: Buffer;
  private readonly endedChannel: string;
  private readonly endedKey: string;
  /** Sessions this process listens for: how many reasons it has, and the SUBSCRIBE in progress. */
  private readonly watched = new Map<string, { count: number; subscribed: Promise<void> }>();
  private handlers: SessionRelayHandlers | undefined;
  private readonly where: string;
  private readonly outage: OutageLog;
  private closed = false;
  private catchingUp = false;
  /** A connection became ready while a catch-up ran: that one may have read too early, so run again. */
  private catchUpAgain = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: {
      url: string;
      sentinel?: SentinelSettings;
      keyPrefix: string;
      /** When a command counts as failed (cache.commandTimeoutMs); COMMAND_TIMEOUT_MS when absent. */
      commandTimeoutMs?: number;
      secret: Buffer;
      log: Log;
    },
  ) {
    this.sealer = new UpgradingSealer(options.secret, 'mcp-gateway legacy relay sealed');
    this.macKey = createHash('sha256').update('mcp-gateway legacy relay signed\0').update(options.secret).digest();
    this.endedChannel = `${options.keyPrefix}sessions:ended`;
    this.endedKey = `${options.keyPrefix}sessions:ended`;
    this.where = describeRedisUrl(options.url);
    this.outage = new OutageLog(options.log, this.where, {
      lost:
        'Redis unreachable: 2025 sessions are served only where their GET stream and questions are until it ' +
        'is back',
      back: 'Redis reachable again: 2025 sessions are shared between replicas again',
    });
    const sentinel = sentinelOptions(options.sentinel, options.url);
    this.client = new Redis(options.url, {
      ...failFastRedisOptions('mcp-gateway-sessions', options.commandTimeoutMs),
      ...sentinel,
    } satisfies RedisOptions);
    // Subscriptions are made again by every catch-up (also after a first attempt that failed).
    this.subscriber = new Redis(options.url, {
      ...failFastRedisOptions('mcp-gateway-sessions-sub', options.commandTimeoutMs),
      ...sentinel,
      autoResubscribe: false,
    } satisfies RedisOptions);
    for (const connection of [this.client, this.subscriber]) {
      connection.on('error', (error: Error) => this.lost(error));
      connection.on('ready', () => this.catchUp());
    }
    this.subscriber.on('message', (channel: string, text: string) => this.heard(channel, text));
  }

  attach(handlers: SessionRelayHandlers): void {
    this.handlers = handlers;
  }

  /**
   * Listens to `session`'s channel until the returned function is called (counted: several reasons may
   * hold it). Resolves once Redis confirmed, or once it failed (logged; the next catch-up subscribes again).
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

  /**
   * Sends `event` to whichever replicas watch `session`; resolves with how many heard it. Rejects when Redis is
   * unreachable.
   */
  async publish(session: string, event: SessionEvent): Promise<number> {
    return this.command(() =>
      this.client.publish(this.channelOf(session), this.sealer.seal(JSON.stringify(event), session)),
    );
  }

  /** Records a resource subscription of `session` (kept until the session expires). */
  async addSubscription(session: string, uri: string, expiresAt: number): Promise<void> {
    const key = this.subscriptionsOf(session);
    await this.command(() =>
      this.client.multi().sadd(key, this.signedUri(session, uri)).pexpireat(key, expiresAt).exec(),
    );
  }

  async removeSubscription(session: string, uri: string): Promise<void> {
    await this.command(() => this.client.srem(this.subscriptionsOf(session), this.signedUri(session, uri)));
  }

  /** The session's resource subscriptions, those this secret signed (anything else in the set is ignored). */
  async subscriptions(session: string): Promise<string[]> {
    const members = await this.command(() => this.client.smembers(this.subscriptionsOf(session)));
    const uris: string[] = [];
    for (const member of members) {
      const dot = member.indexOf('.');
      const uri = member.slice(dot + 1);
      if (dot > 0 && this.verify(member.slice(0, dot), `subscription\0${session}\0${uri}`)) uris.push(uri);
    }
    if (uris.length < members.length) this.forged(members.length - uris.length, 'subscriptions');
    return uris;
  }

  /** Tells every replica that `session` ended (DELETE), and forgets its subscriptions. */
  async end(session: string, expiresAt: number): Promise<void> {
    const member = this.signedEnd(session, expiresAt);
    await this.command(() =>
      this.client
        .multi()
        .del(this.subscriptionsOf(session))
        .zadd(this.endedKey, expiresAt, member)
        .zremrangebyscore(this.endedKey, '-inf', Date.now()) // pruned here, so it holds only sessions not yet expired
        .publish(this.endedChannel, member)
        .exec(),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
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
    // Not connected yet (or reconnecting): the catch-up on 'ready' subscribes to every watched session.
    if (this.subscriber.status !== 'ready') return;
    try {
      await this.subscriber.subscribe(this.channelOf(session));
    } catch (error) {
      this.lost(error);
    }
  }

  /**
   * (Re)connected: listen again to everything watched, learn the sessions ended meanwhile, and say events
   * may have been missed. It needs both connections (SUBSCRIBE on one, then the read on the other, which
   * queues nothing while it connects), so either one's 'ready' starts it and it runs once both are; one
   * that fails is tried again after PAUSE_MS. Otherwise a replica could stay unaware of a DELETE.
   */
  private catchUp(): void {
    if (this.closed) return;
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return;
    }
    if (this.client.status !== 'ready' || this.subscriber.status !== 'ready') return;
    clearTimeout(this.retry);
    this.retry = undefined;
    this.catchingUp = true;
    this.catchUpAgain = false;
    void this.readShared().then((done) => {
      this.catchingUp = false;
      if (this.closed) return;
      if (done && !this.catchUpAgain) return;
      if (done) return this.catchUp();
      this.retry = setTimeout(() => this.catchUp(), PAUSE_MS);
      this.retry.unref();
    });
  }

  private async readShared(): Promise<boolean> {
    let members: string[];
    try {
      await this.subscriber.subscribe(
        this.endedChannel,
        ...[...this.watched.keys()].map((session) => this.channelOf(session)),
      );
      members = await this.client.zrangebyscore(this.endedKey, Date.now(), '+inf');
    } catch (error) {
      this.lost(error);
      return false;
    }
    const ended = members.map((member) => this.openEnd(member)).filter((entry) => entry !== undefined);
    if (ended.length < members.length) this.forged(members.length - ended.length, 'ended sessions');
    if (ended.length) this.handlers?.ended(ended);
    this.reachable();
    for (const session of this.watched.keys()) this.handlers?.event(session, { kind: 'resync' });
    return true;
  }

  private async command<T>(run: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await run();
    } catch (error) {
      this.lost(error);
      throw new Error(
        `Redis at ${this.where} is unreachable (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    this.reachable();
    return result;
  }

  private lost(error: unknown): void {
    if (!this.closed) this.outage.lost(error);
  }

  private reachable(): void {
    this.outage.back();
  }

  private heard(channel: string, text: string): void {
    const handlers = this.handlers;
    if (!handlers) return;
    if (channel === this.endedChannel) {
      const ended = this.openEnd(text);
      if (ended) handlers.ended([ended]);
      else this.forged(1, 'ended sessions');
      return;
    }
    const session = channel.slice(this.channelOf('').length);
    const json = this.sealer.open(text, session);
    if (json === undefined) return this.forged(1, `session ${session}'s channel`);
    const event: unknown = parseJson(json);
    if (!isObject(event)) return;
    if (event.kind === 'answer' && isObject(event.message))
      handlers.event(session, { kind: 'answer', message: event.message });
    else if ((event.kind === 'subscribe' || event.kind === 'unsubscribe') && typeof event.uri === 'string')
      handlers.event(session, { kind: event.kind, uri: event.uri });
  }

  private forged(count: number, where: string): void {
    this.options.log.warn(
      { count },
      `ignored what this replica's key did not seal or sign in ${where}: do all replicas share ` +
        `legacyClients.sessionSecret?`,
    );
  }

  /** `<mac>.<uri>`: the same member for the same subscription, so SREM finds what SADD added. */
  private signedUri(session: string, uri: string): string {
    return `${this.mac(`subscription\0${session}\0${uri}`)}.${uri}`;
  }

  /** `<expiresAt>.<session>.<mac>`: the member of the ended set, and the message announcing it. */
  private signedEnd(session: string, expiresAt: number): string {
    return `${expiresAt}.${session}.${this.mac(`ended\0${session}\0${expiresAt}`)}`;
  }

  private openEnd(member: string): EndedSession | undefined {
    const first = member.indexOf('.');
    const last = member.lastIndexOf('.');
    if (first <= 0 || last <= first) return undefined;
    const expiresAt = Number(member.slice(0, first));
    const session = member.slice(first + 1, last);
    if (!Number.isSafeInteger(expiresAt)) return undefined;
    return this.verify(member.slice(last + 1), `ended\0${session}\0${expiresAt}`) ? { session, expiresAt } : undefined;
  }

  private mac(text: string): string {
    return createHmac('sha256', this.macKey).update(text).digest('base64url');
  }

  /**
   * Compared as text, as the cursors are: decoding first would accept other spellings of the same bytes
   * (padding, the base64 alphabet, the spare bits of the last character, characters the decoder skips),
   * and a spelling SREM does not find would outlive the unsubscription it was copied from.
   */
  private verify(mac: string, text: string): boolean {
    const given = Buffer.from(mac);
    const expected = Buffer.from(this.mac(text));
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
