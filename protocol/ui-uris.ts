// MCP Apps' `ui://` URIs on /mcp (extension io.modelcontextprotocol/ui). Servers pick them freely
// ("ui://dashboard/view.html"), so two servers' views collide, and a view need not be listed at all (the
// spec lets a server leave UI-only resources out of resources/list: a tool's `_meta.ui.resourceUri` is how
// a host finds it). So /mcp namespaces them the way it names tools: `ui://<prefix><separator><rest>`, and
// a read is placed by that head alone, never by the lists. Everything here copies: what it is handed may be
// a shared cache entry.
import { isObject, type JsonObject } from './jsonrpc.js';

const UI_SCHEME = /^ui:\/\//i;
/** The deprecated flat key the spec still names and ext-apps' registerAppTool still writes. */
const LEGACY_RESOURCE_URI_KEY = 'ui/resourceUri';

export function isUiUri(uri: unknown): uri is string {
  return typeof uri === 'string' && UI_SCHEME.test(uri);
}

/** `ui://rest` as /mcp shows it: `ui://<head>rest`, where head is `<prefix><separator>`; other URIs as they are. */
export function publicUiUri(head: string, uri: string): string {
  return isUiUri(uri) ? uri.slice(0, 5) + head + uri.slice(5) : uri;
}

/** The server whose head a /mcp ui:// URI carries, and the URI that server gave; undefined when none does. */
export function ownerOfUiUri(
  uri: string,
  heads: Iterable<[server: string, head: string]>,
): { server: string; uri: string } | undefined {
  if (!isUiUri(uri)) return undefined;
  const rest = uri.slice(5);
  // Config checks refuse a head that begins another, so at most one matches.
  for (const [server, head] of heads)
    if (rest.startsWith(head)) return { server, uri: uri.slice(0, 5) + rest.slice(head.length) };
  return undefined;
}

/** An item of a list as /mcp shows it: a tool's UI resource, a resource's or template's ui:// URI namespaced. */
export function showUiItem(method: string, head: string, item: unknown): unknown {
  if (!isObject(item)) return item;
  if (method === 'tools/list') return showToolUi(head, item);
  return method === 'resources/list' || method === 'resources/templates/list' ? showUiResource(head, item) : item;
}

/** A resources/list item, or a templates/list item (`uriTemplate`), with its ui:// URI namespaced. */
export function showUiResource(head: string, item: JsonObject): JsonObject {
  if (isUiUri(item.uri)) return { ...item, uri: publicUiUri(head, item.uri) };
  if (isUiUri(item.uriTemplate)) return { ...item, uriTemplate: publicUiUri(head, item.uriTemplate) };
  return item;
}

/**
 * A tool as /mcp lists it, its UI resource (`_meta.ui.resourceUri`, and the legacy `_meta["ui/resourceUri"]`)
 * namespaced.
 */
export function showToolUi(head: string, tool: JsonObject): JsonObject {
  const meta = tool._meta;
  if (!isObject(meta)) return tool;
  const ui = meta.ui;
  const nested = isObject(ui) && isUiUri(ui.resourceUri);
  const legacy = isUiUri(meta[LEGACY_RESOURCE_URI_KEY]);
  if (!nested && !legacy) return tool;
  const shown: JsonObject = { ...meta };
  if (nested) shown.ui = { ...ui, resourceUri: publicUiUri(head, ui.resourceUri as string) };
  if (legacy) shown[LEGACY_RESOURCE_URI_KEY] = publicUiUri(head, meta[LEGACY_RESOURCE_URI_KEY] as string);
  return { ...tool, _meta: shown };
}

/** A resources/read result with each ui:// `contents[].uri` namespaced, so the host finds what it asked for. */
export function showUiContents(head: string, result: JsonObject): JsonObject {
  const contents = result.contents;
  if (!Array.isArray(contents) || !contents.some((content) => isObject(content) && isUiUri(content.uri))) return result;
  return {
    ...result,
    contents: contents.map((content) =>
      isObject(content) && isUiUri(content.uri) ? { ...content, uri: publicUiUri(head, content.uri) } : content,
    ),
  };
}
