// The gateway's own requestState, for calls it holds open on a 2025 server while the client answers an
// input request: opaque to the client, tamper-proof (HMAC-SHA256), bound to the caller, to the request's
// content and to an expiry, and naming the gateway instance that holds the call. Never a modern
// upstream's requestState: those pass through untouched and are never opened here.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../../infra/canonical-json.js';
import type { JsonObject } from '../../protocol/jsonrpc.js';

export interface HeldCallState {
  /** The gateway instance holding the call. */
  instance: string;
  /** The server whose call it is: a retry is good on that server's endpoint (or /mcp routing to it) only. */
  upstream: string;
  call: string;
  round: number;
  /** The caller's authorization context. */
  caller: string;
  /** Digest of the request's method and params, less what changes between rounds. */
  request: string;
  expiresAt: number;
}

const PREFIX = 'mcpgw1.';
const MAC_CHARS = 43; // base64url of 32 bytes

export type Opened = { ok: true; state: HeldCallState } | { ok: false; why: string };

export class RequestStateCodec {
  constructor(
    private readonly key: Buffer,
    readonly instance: string,
  ) {}

  issue(state: HeldCallState): string {
    const body = Buffer.from(JSON.stringify(state)).toString('base64url');
    return `${PREFIX}${body}.${this.mac(body)}`;
  }

  /** Whether the token is one this gateway (or a replica with the same secret) issued, and what it says. */
  open(token: string): Opened {
    if (!token.startsWith(PREFIX)) return { ok: false, why: 'it was not issued by this gateway' };
    const dot = token.lastIndexOf('.');
    const body = token.slice(PREFIX.length, dot);
    const mac = token.slice(dot + 1);
    const given = Buffer.from(mac);
    if (dot <= PREFIX.length || given.length !== MAC_CHARS || !timingSafeEqual(given, Buffer.from(this.mac(body)))) {
      return { ok: false, why: 'it was altered, or issued by a gateway with another mrtr.secret' };
    }
    try {
      const state = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as HeldCallState;
      return { ok: true, state };
    } catch {
      return { ok: false, why: 'it is malformed' };
    }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

/** What binds a requestState to its request: the method and params, less _meta and the round's own keys. */
export function requestDigest(method: string, params: JsonObject | undefined): string {
  const { _meta, inputResponses, requestState, ...rest } = params ?? {};
  return createHash('sha256').update(method).update('\0').update(canonicalJson(rest)).digest('base64url');
}
