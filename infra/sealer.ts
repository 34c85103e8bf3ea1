// The one AES-256-GCM construction for everything the gateway encrypts: stored per-user credentials and
// pending links (src/credentials), 2025 session ids and the answers relayed between replicas
// (src/legacy-client). Sealed text is base64url of version (1 byte) | IV (12) | tag (16) | ciphertext; the key
// is HKDF-SHA256 of the secret with the label as salt, so one secret gives unrelated keys per use. The context
// is authenticated, not carried: a text sealed for one place (a principal and server, a session) does not
// open in another.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The first byte of every sealed value: a later format (or key rotation) can tell its own apart. */
const FORMAT = 1;

/** HKDF-SHA256 of `secret` under `label`: the derivation every key of the gateway's own is made by. */
export function deriveKey(secret: string | Buffer, label: string, use: string): Buffer {
  const material = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  return Buffer.from(hkdfSync('sha256', material, label, use, 32));
}

export class Sealer {
  private readonly key: Buffer;

  /** Different labels give unrelated keys from the same secret. */
  constructor(secret: string | Buffer, label: string) {
    this.key = deriveKey(secret, label, 'aes-256-gcm');
  }

  seal(plaintext: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    if (context) cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.of(FORMAT), iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The plaintext, or undefined when the value was altered, sealed for another context, or under another key. */
  open(sealed: string, context = ''): string | undefined {
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== FORMAT) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(1, 1 + IV_BYTES));
      // An empty AAD authenticates exactly as no AAD does, so '' needs no call.
      if (context) decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(bytes.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
      const body = bytes.subarray(1 + IV_BYTES + TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
