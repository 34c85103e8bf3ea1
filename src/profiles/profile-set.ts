// The profiles of the config in force, and whether /search/mcp is on: a reload installs new ones, and an
// unchanged profile keeps its object, so what the edge memoised for it stays. Takes the two config sections
// as its own narrow type, so src/profiles imports no config.
import { Profile, type ProfileSetting, SEARCH_PROFILE } from './profile.js';

/** `profiles` and `search` as the config holds them. */
export interface ProfileSettings {
  profiles: Readonly<Record<string, ProfileSetting>>;
  search: { enabled: boolean };
}

export class ProfileSet {
  private profiles = new Map<string, Profile>();
  /** /search/mcp's view while `search.enabled` is on. */
  private searchView: Profile | undefined = SEARCH_PROFILE;

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
  install({ profiles: settings, search }: ProfileSettings): boolean {
    const next = new Map<string, Profile>();
    const searchView = search.enabled ? SEARCH_PROFILE : undefined;
    let changed = searchView !== this.searchView;
    this.searchView = searchView;
    for (const [name, setting] of Object.entries(settings)) {
      const running = this.profiles.get(name);
      const same = running !== undefined && JSON.stringify(running.setting) === JSON.stringify(setting);
      next.set(name, same ? running : new Profile(name, setting));
      changed ||= !same;
    }
    changed ||= [...this.profiles.keys()].some((name) => !next.has(name));
    this.profiles = next;
    return changed;
  }
}
