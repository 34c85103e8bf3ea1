// Profiles (/profiles/<name>/mcp) and search mode (/search/mcp) at the edge: views over /mcp that
// translate at its edges and leave every step between unchanged. In: a caller's public name becomes the
// /mcp name before the route step (a name the view does not show is placed nowhere, and answered as any
// unknown name on /mcp is). Out: a list page of /mcp, filtered by the guard first (policies name /mcp
// names), then shaped by the profile — pages the view leaves empty are skipped, so a client walking
// nextCursor meets every item once, and few empty pages. server/discover describes the view, not /mcp.
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import type { Grant } from '../../policy/allow-list.js';
import type { Guard } from '../../policy/guard.js';
import type { NamedTarget, Target, UriTarget } from '../../policy/target.js';
import { PLAIN_TARGET } from '../../policy/target.js';
import type { Router } from '../aggregate/index.js';
import { describeView, type NamedKind, type Profile } from '../profiles/index.js';
import { isObject, type JsonObject, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { LIST_ITEMS, type ListMethod } from '../../protocol/mcp.js';
import { SEARCH_TOOL_DEFINITIONS } from '../search/index.js';

/**
 * What a view reads of the request it answers. The edge's McpCall satisfies it as it stands (structurally), so
 * call.ts asks this module and this module does not import call.ts back.
 */
export interface ViewCall {
  readonly edge: { readonly aggregate: { readonly upstream: Upstream } | undefined };
  readonly security: { readonly guard: Guard | undefined };
  readonly grant: Grant | undefined;
}

/** Empty pages skipped in one answer at most; past it an empty page with its nextCursor is answered. */
const MAX_SKIPPED_PAGES = 50;
/** Search mode's list changes only with the config. */
const SEARCH_LIST_TTL_MS = 60_000;

/** The route step on a view: the public name translated in place, then placed by the router as on /mcp. */
export function routeThroughView(router: Router, profile: Profile, message: JsonRpcRequest): Target {
  const params = message.params;
  switch (message.method) {
    case 'tools/call':
      return named(router, profile, 'tools', message, params);
    case 'prompts/get':
      return named(router, profile, 'prompts', message, params);
    case 'resources/read':
      return uri(router, profile, message, params?.uri);
    case 'completion/complete': {
      const ref = isObject(params?.ref) ? params.ref : undefined;
      return ref?.type === 'ref/prompt'
        ? named(router, profile, 'prompts', message, ref)
        : uri(router, profile, message, ref?.uri);
    }
    default:
      return PLAIN_TARGET;
  }
}

function named(
  router: Router,
  profile: Profile,
  kind: NamedKind,
  message: JsonRpcRequest,
  holder: JsonObject | undefined,
): Target {
  const given = holder?.name;
  if (typeof given !== 'string') return router.resolve(undefined, message);
  const mcpName = profile.inbound(kind, given);
  // Not on this view: nobody serves it here, whatever /mcp has (the guard and the router answer "unknown").
  if (mcpName === undefined)
    return {
      kind,
      given,
      endpoint: undefined,
      server: undefined,
      publicName: given,
      listed: undefined,
      confirmed: true,
    };
  if (mcpName === given) return router.resolve(undefined, message);
  holder!.name = mcpName;
  // Refusals repeat the name the caller gave, never the /mcp name behind a rename.
  return { ...(router.resolve(undefined, message) as NamedTarget), given };
}

function uri(router: Router, profile: Profile, message: JsonRpcRequest, given: unknown): Target {
  if (typeof given !== 'string' || profile.showsUri(given)) return router.resolve(undefined, message);
  const outside: UriTarget = {
    kind: 'resources',
    uri: given,
    endpoint: undefined,
    owner: undefined,
    ambiguous: undefined,
    confirmed: true,
  };
  return outside;
}

/**
 * A list on a view: /mcp's page, filtered by the guard, then shaped by the profile; an empty page with a
 * nextCursor is followed by the next, its ttlMs and cacheScope the strictest of the pages read.
 */
export async function listThroughView(
  call: ViewCall,
  profile: Profile,
  message: JsonRpcRequest,
  options: RequestOptions,
): Promise<JsonRpcResponse> {
  const method = message.method as ListMethod;
  if (profile.search && method === 'tools/list') return searchModeList(message);
  const upstream = call.edge.aggregate!.upstream;
  let page = message;
  let ttlMs = Number.POSITIVE_INFINITY;
  let isPrivate = false;
  for (let skipped = 0; ; skipped++) {
    const shaped = shapePage(call, profile, method, await upstream.request(page, options));
    if (!('result' in shaped)) return shaped;
    const result = shaped.result;
    ttlMs = Math.min(ttlMs, typeof result.ttlMs === 'number' ? result.ttlMs : 0);
    isPrivate ||= result.cacheScope !== 'public';
    const next = result.nextCursor;
    const items = result[LIST_ITEMS[method]];
    const done =
      (Array.isArray(items) && items.length > 0) ||
      typeof next !== 'string' ||
      skipped >= MAX_SKIPPED_PAGES ||
      options.signal?.aborted;
    if (done)
      return skipped === 0
        ? shaped
        : {
            jsonrpc: '2.0',
            id: message.id,
            result: { ...result, ttlMs, cacheScope: isPrivate ? 'private' : 'public' },
          };
    page = { ...message, params: { ...message.params, cursor: next } };
  }
}

/** One page as this caller sees it on the view: the guard's filter over /mcp names, then the profile's. */
function shapePage(call: ViewCall, profile: Profile, method: ListMethod, response: JsonRpcResponse): JsonRpcResponse {
  const guard = call.security.guard;
  const filtered = guard && call.grant ? guard.shape(undefined, method, response, call.grant) : response;
  if (!('result' in filtered)) return filtered;
  const key = LIST_ITEMS[method];
  const items = filtered.result[key];
  if (!Array.isArray(items)) return filtered;
  const shown = profile.shapeItems(method, items);
  return shown === items ? filtered : { jsonrpc: '2.0', id: filtered.id, result: { ...filtered.result, [key]: shown } };
}

/** server/discover on a view: /mcp's answer (for this caller), retold as the view's own (profile-discover.ts). */
export async function discoverThroughView(
  call: ViewCall,
  profile: Profile,
  message: JsonRpcRequest,
  options: RequestOptions,
): Promise<JsonRpcResponse> {
  const response = await call.edge.aggregate!.upstream.request(message, options);
  return 'result' in response
    ? { jsonrpc: '2.0', id: response.id, result: describeView(profile, response.result) }
    : response;
}

function searchModeList(message: JsonRpcRequest): JsonRpcResponse {
  return {
    jsonrpc: '2.0',
    id: message.id,
    result: { resultType: 'complete', tools: SEARCH_TOOL_DEFINITIONS, ttlMs: SEARCH_LIST_TTL_MS, cacheScope: 'public' },
  };
}
