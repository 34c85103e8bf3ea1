// How the loader words a key it does not know: a host's own setting (autoApprove) is named as such, a near
// miss of a known key (comand) gets the key it probably meant, anything else is sent to the docs.
import { HOST_ONLY_KEYS } from './mcp-servers.js';

/** One message for the unknown keys at `where`; `known` are the keys valid there (for suggestions). */
export function unknownKeysMessage(where: string, keys: readonly string[], known: readonly string[] = []): string {
  const parts = keys.map((key) => {
    if (Object.hasOwn(HOST_ONLY_KEYS, key))
      return `'${key}' is a host's setting, not the gateway's: ${HOST_ONLY_KEYS[key]}`;
    const near = known.find(
      (candidate) => distance(key.toLowerCase(), candidate.toLowerCase()) <= Math.min(2, candidate.length >> 1),
    );
    return near ? `unknown key '${key}' (did you mean '${near}'?)` : `unknown key '${key}'`;
  });
  const plain = parts.every((part) => part.startsWith('unknown key'));
  return `${where}: ${parts.join('; ')}${plain ? '; check the spelling against docs/configuration.md' : ''}`;
}

/** Levenshtein distance, for short key names only. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
