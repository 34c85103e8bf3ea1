// A profile: a named, curated view over /mcp (`profiles.<name>` in the config, served at
// /profiles/<name>/mcp). Globs over /mcp names and URIs choose what it shows, `rename` gives a tool or
// prompt another public name there, `describe` another description. Plain data and pure functions: the
// edge translates a caller's public name into the /mcp name before the route step, and shapes lists
// after the guard has filtered them, so every rule of /mcp (policy, pins, paging, caching) holds unchanged.
import { anyOf, mayMatchBeginning, type Matcher } from '../../policy/globs.js';
import { isObject, type JsonObject } from '../../protocol/jsonrpc.js';
import { LIST_ITEMS, type ListMethod } from '../../protocol/mcp.js';

export interface ProfileSetting {
  /** Globs over /mcp tool names; left out, every tool. */
  tools?: readonly string[];
  prompts?: readonly string[];
  /** Globs over resource URIs (and templates); left out, every resource. */
  resources?: readonly string[];
  /** /mcp name → public name on this profile, for the tools and prompts its globs show. */
  rename?: Readonly<Record<string, string>>;
  /** Public name → the description shown instead of the upstream's. */
  describe?: Readonly<Record<string, string>>;
  /** Search mode: tools/list shows search_tools and call_tool instead of the tools. */
  search?: boolean;
}

export type NamedKind = 'tools' | 'prompts';
export type ListKind = NamedKind | 'resources';

/** Per kind of list, whether a profile may show anything of one upstream. */
export type UpstreamShown = Readonly<Record<ListKind, boolean>>;

/**
 * What a profile may show of the upstream whose /mcp names begin with `head` (`<prefix><separator>`): a
 * tool or prompt kind when one of its globs may match a name beginning so — a rename adds nothing, as it
 * shows only what the globs match. Resource URIs name no upstream, so any upstream's may be shown unless
 * `resources` is `[]`. A listen stream on the profile hears of an upstream's changes only in these kinds.
 */
export function shownOf(setting: ProfileSetting, head: string): UpstreamShown {
  const resources = setting.resources === undefined || setting.resources.length > 0;
  return {
    tools: mayMatchBeginning(setting.tools, head),
    prompts: mayMatchBeginning(setting.prompts, head),
    resources,
  };
}

const EVERYTHING: Matcher = () => true;

export class Profile {
  readonly search: boolean;
  private readonly shows: Record<NamedKind | 'resources', Matcher>;
  /** /mcp name → public name, and back. */
  private readonly toPublic: ReadonlyMap<string, string>;
  private readonly toMcp: ReadonlyMap<string, string>;
  private readonly descriptions: ReadonlyMap<string, string>;
  /** Shaped items by the array they came from: a cached or guard-filtered page is shaped once. */
  private readonly shaped = new WeakMap<readonly unknown[], unknown[]>();
  /** shownOf by head, worked out once: as many entries as servers' prefixes this profile has outlived. */
  private readonly shownByHead = new Map<string, UpstreamShown>();

  constructor(
    readonly name: string,
    readonly setting: ProfileSetting,
  ) {
    this.search = setting.search === true;
    const globs = (list: readonly string[] | undefined): Matcher => (list === undefined ? EVERYTHING : anyOf(list));
    this.shows = { tools: globs(setting.tools), prompts: globs(setting.prompts), resources: globs(setting.resources) };
    this.toPublic = new Map(Object.entries(setting.rename ?? {}));
    this.toMcp = new Map([...this.toPublic].map(([mcp, shown]) => [shown, mcp]));
    this.descriptions = new Map(Object.entries(setting.describe ?? {}));
  }

  /** The /mcp name a caller's public name stands for; undefined when this profile shows nothing by it. */
  inbound(kind: NamedKind, shown: string): string | undefined {
    const renamed = this.toMcp.get(shown);
    if (renamed !== undefined) return this.shows[kind](renamed) ? renamed : undefined;
    return this.exposes(kind, shown) ? shown : undefined;
  }

  /**
   * The public name of an /mcp name here; undefined when hidden. A rename only renames: the item must still
   * be one its kind's globs show (a rename meant for a prompt must not expose a tool of the same name).
   */
  outbound(kind: NamedKind, mcpName: string): string | undefined {
    const renamed = this.toPublic.get(mcpName);
    if (renamed !== undefined) return this.shows[kind](mcpName) ? renamed : undefined;
    return this.exposes(kind, mcpName) ? mcpName : undefined;
  }

  /**
   * Whether this profile can show anything of a kind: not when its globs for it are `[]` (a rename only renames what
   * they show).
   */
  mayShow(kind: NamedKind | 'resources'): boolean {
    const globs = this.setting[kind];
    return globs === undefined || globs.length > 0;
  }

  /** shownOf for this profile: asked on every list change a listen stream on it could hear of. */
  shownOfHead(head: string): UpstreamShown {
    let shown = this.shownByHead.get(head);
    if (shown === undefined) this.shownByHead.set(head, (shown = shownOf(this.setting, head)));
    return shown;
  }

  /** Whether every tool and prompt is shown, under its /mcp name: what /mcp says of them holds here too. */
  get showsAllAsIs(): boolean {
    const { tools, prompts, resources } = this.setting;
    return tools === undefined && prompts === undefined && resources === undefined && this.toPublic.size === 0;
  }

  showsUri(uri: string): boolean {
    return this.shows.resources(uri);
  }

  /** A list's items as this profile shows them: filtered, renamed and re-described in copies. */
  shapeItems(method: ListMethod, items: readonly unknown[]): unknown[] {
    let kept = this.shaped.get(items);
    if (kept === undefined) {
      kept = [];
      for (const item of items) {
        const shown = isObject(item) ? this.shapeItem(method, item) : undefined;
        if (shown !== undefined) kept.push(shown);
      }
      // Nothing hidden or changed: the page itself, so its pre-serialised form is kept.
      if (kept.length === items.length && kept.every((item, i) => item === items[i])) kept = items as unknown[];
      this.shaped.set(items, kept);
    }
    return kept;
  }

  /** The item under its public name and description, or undefined when hidden (a copy when changed). */
  shapeItem(method: ListMethod, item: JsonObject): JsonObject | undefined {
    if (method === 'resources/list' || method === 'resources/templates/list') {
      const uri = method === 'resources/list' ? item.uri : item.uriTemplate;
      return typeof uri === 'string' && this.showsUri(uri) ? item : undefined;
    }
    if (typeof item.name !== 'string') return undefined;
    const shown = this.outbound(method === 'tools/list' ? 'tools' : 'prompts', item.name);
    if (shown === undefined) return undefined;
    const description = this.descriptions.get(shown);
    if (shown === item.name && description === undefined) return item;
    return description === undefined ? { ...item, name: shown } : { ...item, name: shown, description };
  }

  /** A name shown as itself: matched by the globs, neither renamed away nor taken by another's rename. */
  private exposes(kind: NamedKind, name: string): boolean {
    return this.shows[kind](name) && !this.toPublic.has(name) && !this.toMcp.has(name);
  }
}

/** The search endpoint /search/mcp: every tool of /mcp, in search mode. */
export const SEARCH_PROFILE = new Profile('search', { search: true });

/** Whether a method is a list a profile shapes. */
export function isListMethod(method: string): method is ListMethod {
  return method in LIST_ITEMS;
}
