// The security holder and where its policy guard finds what only the running gateway knows: which server
// owns a resource URI that a merged list shows (the aggregate's answer), to filter lists by the owner's rules.
import type { Aggregator } from '../aggregate/index.js';
import type { Log } from '../../infra/log.js';
import { SecurityHolder } from './build-security.js';

export function createSecurity(
  prefixes: ReadonlyMap<string, string>,
  separator: string,
  aggregate: Aggregator,
  log: Log,
): SecurityHolder {
  return new SecurityHolder(
    {
      prefixes,
      separator,
      ownerOf: (uri) => aggregate.ownerOf(uri),
    },
    log.child({ part: 'security' }),
  );
}
