// Profiles and search mode, wired: the profiles of the config in force (a reload installs new ones; an
// unchanged profile keeps its object, so what the edge memoised for it stays), and the tool index that
// follows the aggregate — fed per server from its tools lists, and again whenever the cache hears that a
// server's tools changed (on this replica or another).
import type { ListCache } from '../../cache/list-cache.js';
import type { GatewayConfig } from '../config.js';
import type { CatalogView } from '../edge/app.js';
import type { Log } from '../infra/log.js';
import { Profile, type ProfileSetting } from '../profiles/profile.js';
import { IndexFeed } from '../search/index-feed.js';
import { ToolIndex } from '../search/tool-index.js';
import type { ServerSet } from './servers.js';

export class Catalog implements CatalogView {
  readonly index = new ToolIndex();
  readonly feed: IndexFeed;
  private profiles = new Map<string, Profile>();

  constructor(servers: ServerSet, cache: ListCache, separator: string, log: Log) {
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

  /** Installs a config's profiles; says whether any was added, changed or removed. */
  install(settings: GatewayConfig['profiles']): boolean {
    const next = new Map<string, Profile>();
    let changed = false;
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

  /** The servers changed (start, reload): index the new and replaced ones, forget the removed. */
  serversChanged(): void {
    this.feed.sync();
  }

  close(): void {
    this.feed.close();
  }
}
