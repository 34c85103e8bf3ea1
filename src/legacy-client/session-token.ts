// A 2025 client's Mcp-Session-Id that carries the session itself: encrypted and authenticated
// (AES-256-GCM), so any replica with the same key serves it without a shared store, and a client can
// neither read nor alter it. What a session cannot carry (its GET stream, its subscriptions, that it was
// ended) lives in the process that serves those.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { JsonObject } from '../protocol/jsonrpc.js';

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

const VERSION = 1;

export class SessionCodec {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    this.key = createHash('sha256').update('mcp-gateway legacy session\0').update(secret).digest();
  }

  mint(session: LegacySession): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(session), 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The session, or undefined when the token was not minted with this key, was altered, or has expired. */
  open(token: string, now = Date.now()): LegacySession | undefined {
    const raw = Buffer.from(token, 'base64url');
    if (raw.length < 1 + 12 + 16 + 2 || raw[0] !== VERSION) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(1, 13));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const json = Buffer.concat([decipher.update(raw.subarray(13, raw.length - 16)), decipher.final()]).toString('utf8');
      const session = JSON.parse(json) as LegacySession;
      return session.expiresAt > now ? session : undefined;
    } catch {
      return undefined;
    }
  }
}
