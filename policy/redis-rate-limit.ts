// Token buckets shared by every replica through Redis: one hash per principal (`<keyPrefix>rl:<sha256>`,
// fields `t` tokens and `at` last update in ms), updated by one Lua script so a take is atomic. The script
// reads the Redis server's clock, so replicas whose clocks disagree still share one refill rate; the hash
// expires once it would be full again, so idle principals cost nothing.
//
// Redis being down must neither refuse every request nor let them all through: each request Redis cannot
// answer is decided by an in-process bucket instead (so during an outage each replica limits on its own).
// Fail-fast like cache/redis-store.ts: commands are not queued while disconnected, a hanging Redis costs
// its command timeout once per PAUSE_MS, and each outage is logged once when it starts and once when it ends.
//
// ioredis is imported only in create(), so a gateway without Redis never loads it.
import { createHash } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';
import type { Log } from '../infra/log.js';
import {
  CONNECT_TIMEOUT_MS,
  describeRedisUrl,
  failFastRedisOptions,
  PAUSE_MS,
  sentinelOptions,
  type SentinelSettings,
} from '../infra/redis-fail-fast.js';
import { OutageLog } from '../infra/redis-outage.js';
import { MemoryRateLimiter, type RateDecision, type RateLimiter, ALLOWED, TOKEN_TOLERANCE } from './rate-limit.js';
import type { RateLimitSetting } from './settings.js';

export interface RedisRateLimiterOptions {
  /** redis:// or rediss:// URL. */
  url: string;
  /** Find the primary through Sentinel (the URL then gives only its credentials, database and TLS). */
  sentinel?: SentinelSettings;
  /** Prefixes every key; replicas sharing limits use the same prefix. */
  keyPrefix: string;
  /** When a command counts as failed (cache.commandTimeoutMs); COMMAND_TIMEOUT_MS when absent. */
  commandTimeoutMs?: number;
  log: Log;
}

/**
 * KEYS[1] the bucket; ARGV[1] requests per minute, ARGV[2] burst. Returns 0 when a token was taken, else the
 * ms until one is back. Same arithmetic (and tolerance) as MemoryRateLimiter.take.
 */
const TAKE_SCRIPT = `
local perMs = tonumber(ARGV[1]) / 60000
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local stored = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(stored[1])
local at = tonumber(stored[2])
if tokens == nil or at == nil then
  tokens = burst
elseif now > at then
  tokens = tokens + (now - at) * perMs
end
if tokens > burst then tokens = burst end
local wait = 0
if tokens >= 1 - ${TOKEN_TOLERANCE} then
  tokens = tokens - 1
else
  wait = math.ceil((1 - ${TOKEN_TOLERANCE / 2} - tokens) / perMs)
end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'at', string.format('%.17g', now))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((burst - tokens) / perMs)))
return wait`;

type ScriptedRedis = Redis & { rateLimitTake(key: string, requestsPerMinute: number, burst: number): Promise<number> };

export class RedisRateLimiter implements RateLimiter {
  /** Decides while Redis cannot: keeps counting through an outage instead of starting from full per request. */
  private readonly fallback = new MemoryRateLimiter();
  /** Requests skip Redis until then (epoch ms) after a failed command. */
  private pausedUntil = 0;
  private readonly outage: OutageLog;
  private closing = false;

  /** Connects, waiting for the first attempt (at most CONNECT_TIMEOUT_MS) so the first requests can use Redis. */
  static async create(options: RedisRateLimiterOptions): Promise<RedisRateLimiter> {
    const { Redis } = await import('ioredis');
    const redisOptions: RedisOptions = {
      ...failFastRedisOptions('mcp-gateway-rate-limit', options.commandTimeoutMs),
      ...sentinelOptions(options.sentinel, options.url),
      // disconnect() during an outage arms this timer for a socket that already closed and never fires its
      // 'close': the default 2 s would keep a stopping gateway (or a test run) alive for nothing.
      disconnectTimeout: 100,
    };
    const client = new Redis(options.url, redisOptions);
    // EVALSHA, falling back to EVAL once per connection when Redis does not know the script yet.
    client.defineCommand('rateLimitTake', { lua: TAKE_SCRIPT, numberOfKeys: 1 });
    const limiter = new RedisRateLimiter(client as ScriptedRedis, options);
    await limiter.firstAttempt();
    return limiter;
  }

  private constructor(
    private readonly client: ScriptedRedis,
    private readonly options: RedisRateLimiterOptions,
  ) {
    this.outage = new OutageLog(options.log, describeRedisUrl(options.url), {
      lost: 'Redis unreachable: rate limits are counted per replica until it is back (reconnecting)',
      back: 'Redis reachable again: rate limits shared across replicas again',
    });
    client.on('error', (error: Error) => this.down(error));
    client.on('close', () => this.down(new Error('connection closed')));
    client.on('ready', () => this.up());
  }

  async take(key: string, limit: RateLimitSetting): Promise<RateDecision> {
    if (!this.usable()) return this.fallback.take(key, limit);
    let wait: number;
    try {
      wait = await this.client.rateLimitTake(this.keyOf(key), limit.requestsPerMinute, limit.burst);
    } catch (error) {
      this.pausedUntil = Date.now() + PAUSE_MS;
      this.down(error);
      return this.fallback.take(key, limit);
    }
    if (this.outage.isDown) this.up();
    return wait === 0 ? ALLOWED : { allowed: false, retryAfterMs: wait };
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.fallback.close();
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // fall through
      }
    }
    this.client.disconnect();
  }

  /** Hashed: principal ids may hold anything, including the prefix's separators. */
  private keyOf(principal: string): string {
    return `${this.options.keyPrefix}rl:${createHash('sha256').update(principal).digest('base64url')}`;
  }

  private usable(): boolean {
    return this.client.status === 'ready' && (this.pausedUntil === 0 || Date.now() >= this.pausedUntil);
  }

  private firstAttempt(): Promise<void> {
    return new Promise((resolve) => {
      const settle = () => {
        clearTimeout(timer);
        this.client.off('ready', settle);
        this.client.off('error', settle);
        resolve();
      };
      const timer = setTimeout(settle, CONNECT_TIMEOUT_MS);
      this.client.on('ready', settle);
      this.client.on('error', settle);
    });
  }

  /** Logs only the first failure of an outage, not one per request or reconnect attempt. */
  private down(error: unknown): void {
    if (!this.closing) this.outage.lost(error);
  }

  /** The connection is (re)established, or a command worked again after failures. */
  private up(): void {
    this.pausedUntil = 0;
    if (!this.closing) this.outage.back();
  }
}
