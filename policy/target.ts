// What a request is about once the router has placed it: plain data the guard judges. The router (src/aggregate)
// fills it in with Map lookups; the guard never looks anything up itself.
import { isObject, type JsonObject } from '../protocol/jsonrpc.js';

/** What the router's lists say of a tool or prompt. */
export interface ListedItem {
  readonly server: string;
  /** The upstream's own name for it. */
  readonly name: string;
  /** The item as the lists gave it (pins compare digests of it); absent when the router did not keep it. */
  readonly definition?: JsonObject;
  /**
   * The gateway's own stand-in for a server the caller has not connected yet (src/aggregate/connect-placeholder.ts).
   */
  readonly placeholder?: boolean;
}

/** The `_meta` key that marks a listed tool as a connect placeholder, with the server it connects as its value. */
export const CONNECTS_META = 'mcp-gateway/connects';

/**
 * Whether an item carries the connect placeholder's mark. Only the gateway's own lists may: /mcp takes the
 * mark off any upstream's item (aggregator.ts), and a server's own endpoint shows no placeholder at all, so
 * that no server can mark a real tool and so have it skip the pin checks that stand between it and a caller.
 */
export function carriesConnectMark(item: JsonObject): boolean {
  return isObject(item._meta) && typeof item._meta[CONNECTS_META] === 'string';
}

/** A tool or prompt by name (tools/call, prompts/get, a prompt's completion). */
export interface NamedTarget {
  readonly kind: 'tools' | 'prompts';
  /** The name as the caller gave it: a refusal repeats it. Not a string when the caller sent something else. */
  readonly given: unknown;
  /** The endpoint's server; undefined on /mcp. */
  readonly endpoint: string | undefined;
  /** The upstream it belongs to: the endpoint's, or on /mcp the one its prefix names; undefined when none. */
  readonly server: string | undefined;
  /** Its name on /mcp (`<prefix><sep><name>`), what policies name; undefined when `given` is not a string. */
  readonly publicName: string | undefined;
  /** Undefined when no list has it (yet). */
  readonly listed: ListedItem | undefined;
  /** Whether the lists were read again after a miss, so that `listed: undefined` is final. */
  readonly confirmed: boolean;
}

/** A resource by URI (resources/read, a resource's completion). */
export interface UriTarget {
  readonly kind: 'resources';
  /** As the caller gave it; not a string when the caller sent something else. */
  readonly uri: unknown;
  /** The endpoint's server; undefined on /mcp. */
  readonly endpoint: string | undefined;
  /** The one upstream that serves it: the endpoint's, or on /mcp the one the resource lists name. */
  readonly owner: string | undefined;
  /** On /mcp, when several upstreams list it. */
  readonly ambiguous: readonly string[] | undefined;
  readonly confirmed: boolean;
  /**
   * The owner's own URI when /mcp shows it namespaced (an MCP Apps `ui://` URI: protocol/ui-uris.ts):
   * what the owner is asked for and what policy judges, as on /servers/<name>/mcp.
   */
  readonly ownUri?: string;
}

/** Lists, discovery, listen: nothing to resolve. */
export interface PlainTarget {
  readonly kind: 'none';
}

export type Target = NamedTarget | UriTarget | PlainTarget;

export const PLAIN_TARGET: PlainTarget = { kind: 'none' };
