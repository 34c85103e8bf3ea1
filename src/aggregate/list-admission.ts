// What /mcp records of each item an upstream lists: its public name (tools and prompts renamed in a shallow copy,
// the upstream's answer may be a shared cache entry), its route, a resource's owner, and the connect
// placeholder's mark kept only where the gateway itself stood in. Clashing names are left out, saying which
// setting tells them apart.
import type { Log } from '../../infra/log.js';
import { CONNECTS_META, carriesConnectMark } from '../../policy/target.js';
import { isObject, type JsonObject } from '../../protocol/jsonrpc.js';
import type { ListMethod } from '../../protocol/mcp.js';
import { publicName } from '../../protocol/public-names.js';
import { isUiUri } from '../../protocol/ui-uris.js';
import type { Router } from './router.js';

/** What admitting an item needs of the aggregator. */
export interface Admission {
  router: Router;
  log: Log;
  prefixes: ReadonlyMap<string, string>;
  separator: string;
}

/**
 * The item as /mcp lists it — tools and prompts renamed in a shallow copy (the upstream's answer may be a
 * shared cache entry), resources as they came — with its route recorded; undefined when left out.
 */
export function admit(
  on: Admission,
  method: ListMethod,
  server: string,
  item: unknown,
  standIn: boolean,
): JsonObject | undefined {
  if (!isObject(item)) return undefined;
  // A ui:// URI (namespaced already) is placed by its namespace, never by what the lists said (ui-uris.ts).
  if (method === 'resources/list') {
    if (typeof item.uri === 'string' && !isUiUri(item.uri)) on.router.resources.addResource(item.uri, server);
    return item;
  }
  if (method === 'resources/templates/list') {
    if (
      typeof item.uriTemplate === 'string' &&
      !isUiUri(item.uriTemplate) &&
      !on.router.resources.addTemplate(item.uriTemplate, server)
    ) {
      on.log.warn(
        { server, uriTemplate: item.uriTemplate },
        'a URI template with no scheme before its first expression is listed but not used to route reads',
      );
    }
    return item;
  }
  if (typeof item.name !== 'string') return undefined;
  const routes = method === 'tools/list' ? on.router.tools : on.router.prompts;
  const name = publicName(on.prefixes.get(server) ?? server, on.separator, item.name);
  // The placeholder mark is the gateway's alone: taken off a server's own item (policy/target.ts).
  const placeholder = standIn && carriesConnectMark(item);
  const shown =
    placeholder || !carriesConnectMark(item)
      ? { ...item, name }
      : { ...item, name, _meta: unmarked(item._meta as JsonObject) };
  const clash = routes.add(
    name,
    placeholder
      ? { server, name: item.name, definition: shown, placeholder: true }
      : { server, name: item.name, definition: shown },
  );
  if (clash) {
    on.log.error(
      { name, servers: [clash.server, server] },
      `two upstreams give the same name on /mcp; the second is left out — set servers.${server}.prefix to tell ` +
        `them apart`,
    );
    return undefined;
  }
  return shown;
}

/** A server's `_meta` without the connect placeholder's mark (a copy: the answer may be a shared cache entry). */
function unmarked(meta: JsonObject): JsonObject {
  const { [CONNECTS_META]: _mark, ...rest } = meta;
  return rest;
}
