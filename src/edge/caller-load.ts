// How much of the gateway one caller holds at once: requests in flight and open streams (subscriptions/listen,
// a 2025 session's GET stream), each capped per caller (listen.maxRequestsPerPrincipal,
// listen.maxStreamsPerPrincipal). Without the caps one principal could open streams until the process ran
// out of file descriptors, and nobody else, not even /healthz, was answered. A caller is who the fair
// queue and the cache say it is: an authenticated principal, or without auth: a set of credentials.
// Two Map operations per request; nothing allocated once a caller is known.
import type { ServerResponse } from 'node:http';
import { ErrorCode } from '../../protocol/jsonrpc.js';
import type { Refusal } from './access.js';
import { reject } from './rejection.js';

export interface CallerLimits {
  /** Requests one caller may have in flight at once (listen streams not counted: they have their own cap). */
  maxRequests: number;
  /** Streams one caller may hold open at once. */
  maxStreams: number;
}

export const CALLER_LIMIT_DEFAULTS: Readonly<CallerLimits> = Object.freeze({ maxRequests: 512, maxStreams: 128 });

/** What a refused caller is told to wait: a request frees its place in about this long, a stream only when closed. */
const REQUEST_RETRY_S = 1;
const STREAM_RETRY_S = 10;

export class CallerLoad {
  private readonly requests = new Map<string, number>();
  private readonly streams = new Map<string, number>();

  constructor(readonly limits: CallerLimits = CALLER_LIMIT_DEFAULTS) {}

  /** Counts a request in; false (and nothing counted) when the caller already has maxRequests in flight. */
  enter(caller: string): boolean {
    const now = this.requests.get(caller) ?? 0;
    if (now >= this.limits.maxRequests) return false;
    this.requests.set(caller, now + 1);
    return true;
  }

  leave(caller: string): void {
    const now = this.requests.get(caller) ?? 0;
    if (now <= 1) this.requests.delete(caller);
    else this.requests.set(caller, now - 1);
  }

  /** Counts a stream open on `outgoing` until it closes; false (nothing counted) when the caller holds maxStreams. */
  openStream(caller: string, outgoing: ServerResponse): boolean {
    const now = this.streams.get(caller) ?? 0;
    if (now >= this.limits.maxStreams) return false;
    this.streams.set(caller, now + 1);
    outgoing.once('close', () => {
      const left = (this.streams.get(caller) ?? 1) - 1;
      if (left <= 0) this.streams.delete(caller);
      else this.streams.set(caller, left);
    });
    return true;
  }

  /** Streams and requests a caller holds now (for tests and the status page). */
  heldBy(caller: string): { requests: number; streams: number } {
    return { requests: this.requests.get(caller) ?? 0, streams: this.streams.get(caller) ?? 0 };
  }

  requestRefusal(who: string): Refusal {
    return tooMany(
      `${who} already has ${this.limits.maxRequests} requests in flight here, the most one caller may ` +
        `(listen.maxRequestsPerPrincipal); retry once some have been answered`,
      REQUEST_RETRY_S,
    );
  }

  streamRefusal(who: string): Refusal {
    return tooMany(
      `${who} already holds ${this.limits.maxStreams} open streams here, the most one caller may ` +
        `(listen.maxStreamsPerPrincipal); close one (one subscriptions/listen stream can watch every list and many ` +
        `resources) or retry later`,
      STREAM_RETRY_S,
    );
  }
}

function tooMany(message: string, seconds: number): Refusal {
  return { ...reject(429, null, ErrorCode.InvalidRequest, message), headers: { 'retry-after': String(seconds) } };
}
