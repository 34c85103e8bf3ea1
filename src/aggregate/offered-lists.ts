// Which lists each server offers, as its server/discover says. A server whose discover names neither prompts
// nor resources is not asked for them on /mcp: asking only earns a "method not found" that counts as an
// upstream error in the metrics. Capabilities are learnt from /mcp's own server/discover (what clients send
// first) or read in the background after the first resources or prompts list that goes to the server; a
// server not known yet is asked, so no list waits for a discover (a slow server would make it wait twice).
import { isObject, type JsonObject } from '../../protocol/jsonrpc.js';
import type { ListMethod } from '../../protocol/mcp.js';
import { isPlaceholderDiscover } from './connect-placeholder.js';
import type { Position } from './cursor.js';
import type { Outcome } from './merged-discover.js';

/** The server/discover capability a list belongs to; tools are always asked for. */
const LIST_FEATURE: Partial<Record<ListMethod, string>> = {
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resources',
};

export class OfferedLists {
  private readonly offered = new Map<string, JsonObject>();
  private readonly learning = new Set<string>();

  /** `serves`: whether a server is still one of /mcp's (an answer may arrive after it was taken out). */
  constructor(private readonly serves: (server: string) => boolean) {}

  /** The positions whose server offers this list, or is not known yet. */
  offering(positions: Position[], method: ListMethod): Position[] {
    const feature = LIST_FEATURE[method];
    if (feature === undefined) return positions;
    return positions.filter(([server]) => {
      const capabilities = this.offered.get(server);
      return capabilities === undefined || capabilities[feature] !== undefined;
    });
  }

  /**
   * After a list went to these servers: learn, in the background, what those not known yet offer (`discover`
   * asks one server its server/discover, as the list's request did).
   */
  learnAfter(method: ListMethod, servers: Iterable<string>, discover: (server: string) => Promise<Outcome>): void {
    if (!LIST_FEATURE[method]) return;
    for (const server of servers) if (!this.offered.has(server)) this.learn(server, discover);
  }

  /** What a server's discover answered, unless it was the gateway's stand-in for a caller not connected. */
  note(outcome: Outcome): void {
    const result = 'response' in outcome && 'result' in outcome.response ? outcome.response.result : undefined;
    if (!result || isPlaceholderDiscover(result)) return;
    if (isObject(result.capabilities) && this.serves(outcome.server))
      this.offered.set(outcome.server, result.capabilities);
  }

  /** A restarted or replaced server may offer other features. */
  clear(): void {
    this.offered.clear();
  }

  private learn(server: string, discover: (server: string) => Promise<Outcome>): void {
    if (this.learning.has(server)) return;
    this.learning.add(server);
    void discover(server).then((outcome) => {
      this.learning.delete(server);
      this.note(outcome);
    });
  }
}
