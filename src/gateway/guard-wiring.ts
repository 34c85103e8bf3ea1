// The security holder and where its policy guard finds what only the running gateway knows: which server
// owns a resource URI, and whether a tool or prompt name exists on /mcp (both answered by the aggregate).
import type { Aggregator } from '../aggregate/aggregator.js';
import type { Log } from '../infra/log.js';
import { SecurityHolder } from '../security.js';

export function createSecurity(prefixes: ReadonlyMap<string, string>, separator: string, aggregate: Aggregator, log: Log): SecurityHolder {
  return new SecurityHolder(
    {
      prefixes,
      separator,
      ownerOf: (uri) => aggregate.ownerOf(uri),
      resolveOwner: (uri) => aggregate.resolveOwner(uri),
      refreshOwners: () => aggregate.refreshOwners(),
      knows: (kind, name) => aggregate.knows(kind, name),
    },
    log.child({ part: 'security' }),
  );
}
