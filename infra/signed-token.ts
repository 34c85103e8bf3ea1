// The one shape of the gateway's signed tokens (a 2025 held call's requestState, a Tasks id): a prefix that
// names the kind and its version, the body as base64url, a dot, and an HMAC-SHA256 over the body (and, where
// the token is bound to someone, over that name first, so the name is checked without being written).
// Readable by any replica with the same key; nothing is held in a process.
import { createHmac, timingSafeEqual } from 'node:crypto';

const MAC_CHARS = 43; // base64url of 32 bytes

export class SignedTokenCodec {
  /**
   * `prefix`: the kind and version, ending in a dot (e.g. 'gwtask1.'). The prefix is not signed (the tokens clients
   * already hold were signed without it), so each kind must have a key of its own.
   */
  constructor(
    private readonly key: Buffer,
    private readonly prefix: string,
  ) {}

  /** `body` (already JSON or other text) signed; `boundTo` is covered by the signature but not written. */
  issue(body: string, boundTo?: string): string {
    const encoded = Buffer.from(body, 'utf8').toString('base64url');
    return `${this.prefix}${encoded}.${this.mac(encoded, boundTo)}`;
  }

  /** The body, or undefined when the token is not of this kind, was altered, or was issued to another. */
  open(token: unknown, boundTo?: string): string | undefined {
    if (typeof token !== 'string' || !token.startsWith(this.prefix)) return undefined;
    const dot = token.lastIndexOf('.');
    if (dot <= this.prefix.length) return undefined;
    const encoded = token.slice(this.prefix.length, dot);
    // Compared as text: decoding first would let the spare bits of the last character vary.
    const given = Buffer.from(token.slice(dot + 1));
    if (given.length !== MAC_CHARS || !timingSafeEqual(given, Buffer.from(this.mac(encoded, boundTo))))
      return undefined;
    return Buffer.from(encoded, 'base64url').toString('utf8');
  }

  /** Whether `token` claims this kind (its prefix), whatever its signature: for saying why one was refused. */
  claims(token: string): boolean {
    return token.startsWith(this.prefix);
  }

  private mac(encoded: string, boundTo: string | undefined): string {
    const hmac = createHmac('sha256', this.key);
    if (boundTo !== undefined) hmac.update(boundTo).update('\0');
    return hmac.update(encoded).digest('base64url');
  }
}
