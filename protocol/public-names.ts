// The name a tool or prompt gets on /mcp: `<prefix><separator><name>`, kept to ^[A-Za-z0-9_-]{1,64}$
// because many hosts accept nothing else. A name that does not fit is made to fit deterministically — a
// readable head plus a hash of where it came from — so it is the same after every restart.
import { createHash } from 'node:crypto';

export const PUBLIC_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX = 64;
const HASH_CHARS = 8;

export function publicName(prefix: string, separator: string, name: string): string {
  const plain = prefix + separator + name;
  if (PUBLIC_NAME.test(plain)) return plain;
  const hash = createHash('sha256').update(`${prefix}\0${name}`).digest('hex').slice(0, HASH_CHARS);
  const head = plain.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX - HASH_CHARS - 1);
  return `${head}-${hash}`;
}
