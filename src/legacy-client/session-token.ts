// A 2025 client's Mcp-Session-Id that carries the session itself: encrypted and authenticated
// (AES-256-GCM), so any replica with the same key serves it without a shared store, and a client can
// neither read nor alter it. What a session cannot carry (its GET stream, its subscriptions, that it was
// ended) lives in the process that serves those.
import { parseJson } from '../../protocol/exact-json.js';
import type { JsonObject } from '../../protocol/jsonrpc.js';
import { UpgradingSealer } from './sealer-v1.js';

export interface LegacySession {
  /** Random id, for the per-process state of the session. */
  id: string;
  protocolVersion: string;
  /** The client's capabilities from initialize: they become each request's clientCapabilities. */
  capabilities: JsonObject;
  clientInfo: JsonObject | undefined;
  /** The endpoint it was opened on ('mcp' or a server's name): a session is good there only. */
  endpoint: string;
  /** Who opened it (the authorization context): nobody else may use it. */
  caller: string;
  expiresAt: number;
}

export class SessionCodec {
  // The label keeps session ids apart from anything else sealed with legacyClients.sessionSecret.
  private readonly sealer: UpgradingSealer;

  constructor(secret: Buffer) {
    this.sealer = new UpgradingSealer(secret, 'mcp-gateway legacy session');
  }

  mint(session: LegacySession): string {
    return this.sealer.seal(JSON.stringify(session));
  }

  /** The session, or undefined when the token was not minted with this key, was altered, or has expired. */
  open(token: string, now = Date.now()): LegacySession | undefined {
    const json = this.sealer.open(token);
    if (json === undefined) return undefined;
    try {
      const session = parseJson(json) as LegacySession; // the client's capabilities as it wrote them
      return session.expiresAt > now ? session : undefined;
    } catch {
      return undefined;
    }
  }
}
