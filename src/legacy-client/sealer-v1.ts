// The reader of what 2025 session ids and relayed answers were sealed with before infra/sealer.ts became the
// one construction (main up to 38b2fd0): a key of SHA-256(label NUL secret) and version | IV | ciphertext | tag.
// It only opens: a 2025 client keeps its session id across the upgrade, and a replica still on the old code
// during a rolling upgrade relays in the old form. New text is sealed by infra/sealer.ts alone.
import { createDecipheriv, createHash } from 'node:crypto';
import { Sealer } from '../../infra/sealer.js';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealedV1Reader {
  private readonly key: Buffer;

  constructor(secret: Buffer, label: string) {
    this.key = createHash('sha256').update(`${label}\0`).update(secret).digest();
  }

  /** The plaintext, or undefined when `sealed` is not the old form under this key and context. */
  open(sealed: string, context = ''): string | undefined {
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.length < 1 + IV_BYTES + TAG_BYTES || raw[0] !== VERSION) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(1, 1 + IV_BYTES));
      if (context) decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const body = raw.subarray(1 + IV_BYTES, raw.length - TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** infra/sealer.ts's seal, and an open that also reads the old form: what the legacy client seals with. */
export class UpgradingSealer {
  private readonly reader: SealedV1Reader;
  private readonly sealer: Sealer;

  constructor(secret: Buffer, label: string) {
    this.sealer = new Sealer(secret, label);
    this.reader = new SealedV1Reader(secret, label);
  }

  seal(plaintext: string, context = ''): string {
    return this.sealer.seal(plaintext, context);
  }

  open(sealed: string, context = ''): string | undefined {
    return this.sealer.open(sealed, context) ?? this.reader.open(sealed, context);
  }
}
