// API keys, stored and compared only as SHA-256 digests so the config (and a heap dump) never holds a usable key.

import { createHash } from 'node:crypto';
import type { Principal } from './principal.js';
import type { ApiKeySetting } from './settings.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export class ApiKeys {
  // A Map lookup by digest is not a timing oracle worth guarding: learning how a digest compares says nothing
  // useful about a key an attacker could choose, as SHA-256 cannot be steered towards a prefix.
  readonly #byDigest = new Map<string, Principal>();

  constructor(settings: readonly ApiKeySetting[]) {
    settings.forEach((setting, index) => {
      const digest = setting.sha256.toLowerCase();
      if (!SHA256_HEX.test(digest)) {
        throw new Error(
          `auth.apiKeys[${index}].sha256 is not 64 hex digits: give the SHA-256 of the key, or the key itself as ` +
            `\`key:\``,
        );
      }
      const clash = this.#byDigest.get(digest);
      if (clash) {
        throw new Error(
          `auth.apiKeys[${index}] (principal "${setting.principal}") repeats the key of principal "${clash.id}": ` +
            `every key must be distinct`,
        );
      }
      // Built once and frozen so a successful lookup allocates nothing and nobody downstream can widen it.
      this.#byDigest.set(
        digest,
        Object.freeze({
          id: setting.principal,
          groups: Object.freeze([...setting.groups]),
          scopes: Object.freeze([]),
          via: 'api-key',
        }),
      );
    });
  }

  /** Whether an API key authenticates this principal id. */
  names(id: string): boolean {
    for (const principal of this.#byDigest.values()) if (principal.id === id) return true;
    return false;
  }

  get size(): number {
    return this.#byDigest.size;
  }

  lookup(token: string): Principal | undefined {
    return this.#byDigest.size === 0 ? undefined : this.#byDigest.get(sha256Hex(token));
  }
}
