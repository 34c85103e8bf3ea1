// Whether this host can run the sandbox's end-to-end tests, and if not why, as a skip reason: the tests
// need the full tier (bubblewrap, user namespaces, prlimit), and a root gateway runs its sandboxed children
// as nobody, who must be able to reach the repository (a checkout under /root is not reachable).
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sandboxTier } from '../bridge/sandbox/probe.js';
import { IN_CI } from './services.js';

/** false when the sandbox tests can run here, else why not. */
export async function sandboxSkip(root: string): Promise<string | false> {
  const tier = await sandboxTier();
  if (tier.name !== 'full') {
    const why = `this host's sandbox tier is ${tier.name} (${tier.why ?? 'no prlimit'})`;
    // .ci/run installs bubblewrap and socat: in CI a lower tier is a broken set-up, not a reason to skip.
    if (IN_CI)
      throw new Error(`${why}: install bubblewrap and socat (CI=true: the sandbox tests fail instead of skipping)`);
    return why;
  }
  if (process.getuid?.() !== 0) return false;
  for (const place of [root, tmpdir()]) {
    const closed = closedAncestor(place);
    if (closed) return `sandboxed children run as nobody here, who cannot enter ${closed}`;
  }
  return false;
}

/** The first folder on the way to `place` that others may not enter, if any. */
function closedAncestor(place: string): string | undefined {
  let folder = path.resolve(place);
  const chain: string[] = [];
  while (true) {
    chain.unshift(folder);
    const parent = path.dirname(folder);
    if (parent === folder) break;
    folder = parent;
  }
  return chain.find((one) => (statSync(one).mode & 0o001) === 0);
}
