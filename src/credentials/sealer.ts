// Encryption at rest for per-user credentials: AES-256-GCM under a key derived (HKDF-SHA256) from
// credentials.key, each record bound to its principal and server as additional data, so a record copied
// to another principal's or server's place, or altered in any byte, is refused rather than used.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The first byte of every sealed value: a later format (or key rotation) can tell its own apart. */
const FORMAT = 1;

export class CredentialSealer {
  private readonly encryptionKey: Buffer;
  private readonly indexKey: Buffer;

  constructor(secret: string) {
    const material = Buffer.from(secret, 'utf8');
    this.encryptionKey = Buffer.from(hkdfSync('sha256', material, 'mcp-gateway credentials', 'aes-256-gcm', 32));
    this.indexKey = Buffer.from(hkdfSync('sha256', material, 'mcp-gateway credentials', 'index', 32));
  }

  /** `plaintext` encrypted for one place (`bound`: who and where it belongs), as base64url text. */
  seal(plaintext: string, bound: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, iv);
    cipher.setAAD(Buffer.from(bound, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.of(FORMAT), iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The plaintext, or undefined when the value was altered, sealed for another place, or under another key. */
  open(sealed: string, bound: string): string | undefined {
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== FORMAT) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, bytes.subarray(1, 1 + IV_BYTES));
      decipher.setAAD(Buffer.from(bound, 'utf8'));
      decipher.setAuthTag(bytes.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      return undefined;
    }
  }

  /** A principal's name as the store files it: keyed, so the file or Redis does not list who connected. */
  index(name: string): string {
    return createHmac('sha256', this.indexKey).update(name, 'utf8').digest('base64url');
  }
}
