// Search mode's index, kept: the tool index that follows the aggregate once searched — loaded then, fed per
// server from its tools lists (index-feed.ts), and again whenever the cache hears that a server's tools
// changed (on this replica or another) — and the warm-up that fills it on the first search. The edge reads
// it as its SearchIndex (src/edge/call.ts: `index` and `warm`); the search_tools/call_tool step itself stays at the
// edge (src/edge/search-step.ts), see README.md here.
import type { ListCache } from '../../cache/list-cache.js';
import { IndexFeed, type IndexFeedOptions } from './index-feed.js';
import type { ToolIndex } from './tool-index.js';

export interface ToolSearchOptions extends IndexFeedOptions {
  /** Tells which servers' tools changed (the list cache's invalidations, from any replica). */
  changes: Pick<ListCache, 'onInvalidate' | 'onMissedChanges'>;
  /** How long the first search waits for the servers' lists (/mcp's own list deadline). */
  waitMs: number;
}

export class ToolSearch {
  /**
   * Undefined until the first search: the index (MiniSearch, about 0.4 MB of heap with its module) is loaded
   * then, so a gateway nobody searches neither reads extra lists nor holds it.
   */
  index: ToolIndex | undefined;
  private feed: IndexFeed | undefined;
  private readonly feedOptions: IndexFeedOptions;
  private readonly waitMs: number;
  /** Undefined until the first search; then the first reads, until they end or the wait is over. */
  private warming: Promise<void> | undefined;
  private warmed = false;
  private closed = false;

  constructor({ changes, waitMs, ...feed }: ToolSearchOptions) {
    this.waitMs = waitMs;
    this.feedOptions = feed;
    changes.onInvalidate((server, lists) => {
      if (lists.includes('tools/list')) this.feed?.refresh(server);
    });
    changes.onMissedChanges(() => this.feed?.refreshAll());
  }

  /**
   * The index is filled on demand: a gateway nobody searches reads no extra lists. The first search loads
   * it, starts it and waits for the servers' tools (at most waitMs, as a list on /mcp waits); from then on it
   * follows every server and this is undefined.
   */
  warm(): Promise<void> | undefined {
    if (this.warmed) return undefined;
    if (this.warming === undefined) {
      // Settled either way: a failed first read must not leave every later search waiting on it.
      const done = (): void => {
        this.warmed = true;
      };
      this.warming = this.startIndex().then(done, done);
    }
    return this.warming;
  }

  private async startIndex(): Promise<void> {
    const { ToolIndex } = await import('./tool-index.js');
    if (this.closed) return;
    this.index = new ToolIndex();
    this.feed = new IndexFeed(this.index, this.feedOptions);
    this.feed.sync();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.waitMs);
      timer.unref();
    });
    await Promise.race([this.feed.settled(), deadline]).finally(() => clearTimeout(timer));
  }

  /** The servers changed (a reload): once searched, index the new and replaced ones, forget the removed. */
  serversChanged(): void {
    // Before the index is loaded there is nothing to change: startIndex syncs with the servers as they are.
    this.feed?.sync();
  }

  close(): void {
    this.closed = true;
    this.feed?.close();
  }
}
