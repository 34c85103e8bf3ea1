// Per-principal rate limits as token buckets. A bucket holds up to `burst` tokens, starts full and refills
// continuously at requestsPerMinute / 60 000 tokens per ms; each request takes one. A request that finds less
// than one token is refused with the time until one is back. redis-rate-limit.ts runs the same arithmetic in
// Lua so that replicas share buckets; keep the two in step.
//
// Limits are expected validated by the config (requestsPerMinute > 0, burst >= 1).
import { LRUCache } from 'lru-cache';
import type { RateLimitSetting } from './settings.js';

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface RateLimiter {
  /** Takes one token from the bucket of `key` (a principal id) with this limit. Sync for memory, async for Redis. */
  take(key: string, limit: RateLimitSetting): RateDecision | Promise<RateDecision>;
  close(): Promise<void>;
}

export interface MemoryRateLimiterOptions {
  /** Milliseconds on a clock that does not jump; defaults to performance.now(). */
  now?: () => number;
  /** Buckets kept; the least recently used is forgotten beyond this (and starts full if it comes back). */
  maxKeys?: number;
}

/** One object for every allowed request: the hot path allocates only when it refuses. */
export const ALLOWED: RateDecision = Object.freeze({ allowed: true as const });

const DEFAULT_MAX_KEYS = 100_000;

/**
 * Floating-point refill lands a hair off whole tokens. A take needs 1 - TOKEN_TOLERANCE tokens, and the wait
 * we tell the client aims at 1 - TOKEN_TOLERANCE / 2: waiting it is always enough, and (but for
 * a vanishingly narrow window) not a ms more than needed.
 */
export const TOKEN_TOLERANCE = 1e-9;

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets: LRUCache<string, Bucket>;
  private readonly now: () => number;

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.now = options.now ?? (() => performance.now());
    this.buckets = new LRUCache<string, Bucket>({ max: options.maxKeys ?? DEFAULT_MAX_KEYS });
  }

  take(key: string, limit: RateLimitSetting): RateDecision {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: limit.burst, updatedAt: now };
      this.buckets.set(key, bucket);
    }
    const perMs = limit.requestsPerMinute / 60_000;
    const elapsed = now - bucket.updatedAt; // never negative with the default clock; an injected one may jump back
    // min() also shrinks a bucket whose burst was lowered by a config reload.
    const tokens = Math.min(limit.burst, elapsed > 0 ? bucket.tokens + elapsed * perMs : bucket.tokens);
    bucket.updatedAt = now;
    if (tokens >= 1 - TOKEN_TOLERANCE) {
      bucket.tokens = tokens - 1;
      return ALLOWED;
    }
    bucket.tokens = tokens;
    return { allowed: false, retryAfterMs: Math.ceil((1 - TOKEN_TOLERANCE / 2 - tokens) / perMs) };
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }
}
