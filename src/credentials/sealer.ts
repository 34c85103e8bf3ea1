// Encryption at rest for per-user credentials: infra/sealer.ts's construction under credentials.key, each
// record bound to its principal and server as additional data, so a record copied to another principal's or
// server's place, or altered in any byte, is refused rather than used; and the keyed index that files a
// principal without naming them.
import { createHmac } from 'node:crypto';
import { deriveKey, Sealer } from '../../infra/sealer.js';

/** The label stored records have been sealed under since they were first written: changing it loses them all. */
const LABEL = 'mcp-gateway credentials';

export class CredentialSealer {
  private readonly sealer: Sealer;
  private readonly indexKey: Buffer;

  constructor(secret: string) {
    this.sealer = new Sealer(secret, LABEL);
    this.indexKey = deriveKey(secret, LABEL, 'index');
  }

  /** `plaintext` encrypted for one place (`bound`: who and where it belongs), as base64url text. */
  seal(plaintext: string, bound: string): string {
    return this.sealer.seal(plaintext, bound);
  }

  /** The plaintext, or undefined when the value was altered, sealed for another place, or under another key. */
  open(sealed: string, bound: string): string | undefined {
    return this.sealer.open(sealed, bound);
  }

  /** A principal's name as the store files it: keyed, so the file or Redis does not list who connected. */
  index(name: string): string {
    return createHmac('sha256', this.indexKey).update(name, 'utf8').digest('base64url');
  }
}
