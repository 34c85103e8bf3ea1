// Profiles and search mode, wired: the profiles of the config in force (a reload installs new ones; an
// unchanged profile keeps its object, so what the edge memoised for it stays), and the tool index that
// follows the aggregate once searched — fed per server from its tools lists, and again whenever the cache
// hears that a server's tools changed (on this replica or another).
import type { ListCache } from '../../cache/list-cache.js';
import type { GatewayConfig } from '../config/config.js';
import type { CatalogView } from '../edge/app.js';
import type { Log } from '../../infra/log.js';
import { Profile, type ProfileSetting, SEARCH_PROFILE } from '../profiles/profile.js';
import { IndexFeed } from '../search/index-feed.js';
import { ToolIndex } from '../search/tool-index.js';
import type { ServerSet } from './servers.js';

export class Catalog implements CatalogView {
  readonly index = new ToolIndex();
  readonly feed: IndexFeed;
  private profiles = new Map<string, Profile>();
  /** /search/mcp's view while `search.enabled` is on. */
  private searchView: Profile | undefined = SEARCH_PROFILE;
  /** Undefined until the first search; then the first reads, until they end or the wait is over. */
  private warming: Promise<void> | undefined;
  private warmed = false;

  /** `waitMs`: how long the first search waits for the servers' lists (/mcp's own list deadline). */
  constructor(
    servers: ServerSet,
    cache: ListCache,
    separator: string,
    private readonly waitMs: number,
    log: Log,
  ) {
    this.feed = new IndexFeed(this.index, { upstreams: servers.upstreams, prefixes: servers.prefixes, separator, log });
    cache.onInvalidate((server, lists) => {
      if (lists.includes('tools/list')) this.feed.refresh(server);
    });
    cache.onMissedChanges(() => this.feed.refreshAll());
  }

  profile(name: string): Profile | undefined {
    return this.profiles.get(name);
  }

  profileNames(): string[] {
    return [...this.profiles.keys()];
  }

  /** /search/mcp's view, or undefined when `search.enabled` is false. */
  searchMode(): Profile | undefined {
    return this.searchView;
  }

  /** Installs a config's profiles and search switch; says whether any view was added, changed or removed. */
  install({ profiles: settings, search }: Pick<GatewayConfig, 'profiles' | 'search'>): boolean {
    const next = new Map<string, Profile>();
    const searchView = search.enabled ? SEARCH_PROFILE : undefined;
    let changed = searchView !== this.searchView;
    this.searchView = searchView;
    for (const [name, setting] of Object.entries(settings)) {
      const running = this.profiles.get(name);
      const same = running !== undefined && JSON.stringify(running.setting) === JSON.stringify(setting);
      next.set(name, same ? running : new Profile(name, setting as ProfileSetting));
      changed ||= !same;
    }
    changed ||= [...this.profiles.keys()].some((name) => !next.has(name));
    this.profiles = next;
    return changed;
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
