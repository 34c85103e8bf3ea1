// The /mcp cursor: where each upstream's listing stands, opaque to clients and signed so a crafted cursor
// cannot steer a request at another server's pages. Bound to the method it was issued for.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Per upstream still to be read: its name and its own cursor (null: its first page). Names, not positions,
 * so a cursor stays with its server when replicas list servers in another order or the config changes.
 */
export type Position = [server: string, cursor: string | null];

export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret: string | undefined) {
    this.key = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  }

  encode(method: string, positions: Position[]): string {
    const payload = Buffer.from(JSON.stringify(positions)).toString('base64url');
    return `${payload}.${this.sign(method, payload)}`;
  }

  /** The positions, or undefined when the cursor was not issued by this gateway for this method. */
  decode(method: string, cursor: string, servers: ReadonlySet<string>): Position[] | undefined {
    const dot = cursor.indexOf('.');
    if (dot <= 0) return undefined;
    const payload = cursor.slice(0, dot);
    // Compared as text: decoding first would let the spare bits of the last character vary.
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.sign(method, payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const positions = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
      if (!Array.isArray(positions)) return undefined;
      for (const p of positions) {
        if (!Array.isArray(p) || typeof p[0] !== 'string' || !servers.has(p[0])) return undefined;
        if (p[1] !== null && typeof p[1] !== 'string') return undefined;
      }
      return positions as Position[];
    } catch {
      return undefined;
    }
  }

  private sign(method: string, payload: string): string {
    return createHmac('sha256', this.key).update(method).update('\0').update(payload).digest('base64url').slice(0, 22);
  }
}
