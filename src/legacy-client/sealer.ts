// AES-256-GCM under a key derived from a secret and a label: what a 2025 session id is made of
// (session-token.ts), and what answers to the gateway's questions travel between replicas in
// (session-relay.ts). One construction, so both get the same care. Sealed text is base64url of
// version (1 byte) | IV (12) | ciphertext | tag (16). The optional context is authenticated, not carried:
// a text sealed for one context (a session) does not open in another.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class Sealer {
  private readonly key: Buffer;

  /** Different labels give unrelated keys from the same secret. */
  constructor(secret: Buffer, label: string) {
    this.key = createHash('sha256').update(`${label}\0`).update(secret).digest();
  }

  seal(plaintext: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    if (context) cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The plaintext, or undefined when `sealed` was not sealed with this key and context, or was altered. */
  open(sealed: string, context = ''): string | undefined {
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.length < 1 + IV_BYTES + TAG_BYTES || raw[0] !== VERSION) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(1, 1 + IV_BYTES));
      if (context) decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(raw.subarray(1 + IV_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
