// How a retry reaches the replica holding its call (with Redis): the edge's view of src/mrtr.
import type { PeerTrust } from '../mrtr/index.js';

export interface RetryRouting {
  /** This instance's id. */
  instance: string;
  /** The instance holding the call, when the token is the gateway's own and names another instance. */
  holderOf(requestState: string): string | undefined;
  /** A verified registry URL that mrtr.peers allows, or undefined. */
  lookup(instance: string): Promise<string | undefined>;
  /** Signs and opens the header a replica vouches for a forward's caller with (mrtr/peer-trust.ts). */
  trust: Pick<PeerTrust, 'vouch' | 'openVouch'>;
}
