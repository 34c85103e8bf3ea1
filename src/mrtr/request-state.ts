// The gateway's own requestState, for calls it holds open on a 2025 server while the client answers an
// input request: opaque to the client, tamper-proof (HMAC-SHA256), bound to the caller, to the request's
// content and to an expiry, and naming the gateway instance that holds the call. Never a modern
// upstream's requestState: those pass through untouched and are never opened here.
import { createHash } from 'node:crypto';
import { SignedTokenCodec } from '../../infra/signed-token.js';
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

/** The kind and version of the gateway's own requestState: a modern upstream's never starts with it. */
const PREFIX = 'mcpgw1.';

export type Opened = { ok: true; state: HeldCallState } | { ok: false; why: string };

export class RequestStateCodec {
  private readonly tokens: SignedTokenCodec;

  constructor(
    key: Buffer,
    readonly instance: string,
  ) {
    this.tokens = new SignedTokenCodec(key, PREFIX);
  }

  issue(state: HeldCallState): string {
    return this.tokens.issue(JSON.stringify(state));
  }

  /** Whether the token is one this gateway (or a replica with the same secret) issued, and what it says. */
  open(token: string): Opened {
    if (!this.tokens.claims(token)) return { ok: false, why: 'it was not issued by this gateway' };
    const body = this.tokens.open(token);
    if (body === undefined)
      return { ok: false, why: 'it was altered, or issued by a gateway with another mrtr.secret' };
    try {
      return { ok: true, state: JSON.parse(body) as HeldCallState };
    } catch {
      return { ok: false, why: 'it is malformed' };
    }
  }
}

/** What binds a requestState to its request: the method and params, less _meta and the round's own keys. */
export function requestDigest(method: string, params: JsonObject | undefined): string {
  const { _meta, inputResponses, requestState, ...rest } = params ?? {};
  return createHash('sha256').update(method).update('\0').update(canonicalJson(rest)).digest('base64url');
}
