// Search mode's index, kept: the tool index that follows the aggregate once searched — fed per server from
// its tools lists (index-feed.ts), and again whenever the cache hears that a server's tools changed (on this
// replica or another) — and the warm-up that fills it on the first search. The edge reads it as its
// SearchIndex (src/edge/call.ts: `index` and `warm`); the search_tools/call_tool step itself stays at the
// edge (src/edge/search-step.ts), see README.md here.
import type { ListCache } from '../../cache/list-cache.js';
import { IndexFeed, type IndexFeedOptions } from './index-feed.js';
import { ToolIndex } from './tool-index.js';

export interface ToolSearchOptions extends IndexFeedOptions {
  /** Tells which servers' tools changed (the list cache's invalidations, from any replica). */
  changes: Pick<ListCache, 'onInvalidate' | 'onMissedChanges'>;
  /** How long the first search waits for the servers' lists (/mcp's own list deadline). */
  waitMs: number;
}

export class ToolSearch {
  readonly index = new ToolIndex();
  readonly feed: IndexFeed;
  private readonly waitMs: number;
  /** Undefined until the first search; then the first reads, until they end or the wait is over. */
  private warming: Promise<void> | undefined;
  private warmed = false;

  constructor({ changes, waitMs, ...feed }: ToolSearchOptions) {
    this.waitMs = waitMs;
    this.feed = new IndexFeed(this.index, feed);
    changes.onInvalidate((server, lists) => {
      if (lists.includes('tools/list')) this.feed.refresh(server);
    });
    changes.onMissedChanges(() => this.feed.refreshAll());
  }

  /**
   * The index is filled on demand: a gateway nobody searches reads no extra lists. The first search starts
   * it and waits for the servers' tools (at most waitMs, as a list on /mcp waits); from then on it follows
   * every server and this is undefined.
   */
  warm(): Promise<void> | undefined {
    if (this.warmed) return undefined;
    if (this.warming === undefined) {
      this.feed.sync();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.waitMs);
        timer.unref();
      });
      // Settled either way: a failed first read must not leave every later search waiting on it.
      const done = (): void => {
        clearTimeout(timer);
        this.warmed = true;
      };
      this.warming = Promise.race([this.feed.settled(), deadline]).then(done, done);
    }
    return this.warming;
  }

  /** The servers changed (a reload): once searched, index the new and replaced ones, forget the removed. */
  serversChanged(): void {
    if (this.warming !== undefined) this.feed.sync();
  }

  close(): void {
    this.feed.close();
  }
}
