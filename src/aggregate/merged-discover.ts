// /mcp's server/discover: the gateway's own serverInfo, the features any upstream offers (only those /mcp
// itself serves), every extension at least one upstream offers (with which ones, in _meta), and every
// upstream's instructions under its name, when the caller may see all that upstream offers (free text may
// name a tool a policy hides).
import type { Reach } from '../../bridge/upstream.js';
import { isObject, type JsonObject, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { META, SUPPORTED_VERSIONS } from '../../protocol/mcp.js';
import { GATEWAY_INFO } from '../../infra/version.js';
import { numberOf } from '../../protocol/exact-json.js';

/** One upstream's answer to a fanned-out request, or its silence past the deadline. */
/**
 * One server's part of a merged answer; `standIn` when the gateway gave it (a connect placeholder part), not the
 * server.
 */
export type Outcome =
  | { server: string; response: JsonRpcResponse; standIn?: true }
  | { server: string; timedOut: true };

/** The _meta key of a merged discover that says which servers offer each extension it lists. */
export const EXTENSION_SERVERS_META = 'mcp-gateway/extensionServers';

/** `reach`: what a policy lets the caller see; with one, the answer is the caller's own (private). */
export function mergeDiscover(
  outcomes: readonly Outcome[],
  separator: string,
  reach: Pick<Reach, 'seesAll'> | undefined,
): JsonObject {
  const limited = reach !== undefined;
  const capabilities: JsonObject = {};
  const instructions: string[] = [];
  let ttlMs = Number.POSITIVE_INFINITY;
  let cacheScope: 'public' | 'private' = 'public';
  let complete = true;
  const extensions: JsonObject = {};
  const offeredBy: Record<string, string[]> = {};
  for (const outcome of outcomes) {
    if ('timedOut' in outcome || !('result' in outcome.response)) {
      complete = false;
      continue;
    }
    const result = outcome.response.result;
    const offered = isObject(result.capabilities) ? result.capabilities : {};
    // Only what /mcp itself serves: the features, list changes and resource updates (relayed on
    // subscriptions/listen, a subscription to the server that owns the URI), and log messages (relayed on a
    // routed request's stream when it sets a logLevel).
    for (const key of ['tools', 'prompts', 'resources', 'completions', 'logging']) {
      if (!(key in offered)) continue;
      const feature = (capabilities[key] ??= {}) as JsonObject;
      const settings = isObject(offered[key]) ? offered[key] : {};
      if (key !== 'completions' && key !== 'logging' && settings.listChanged === true) feature.listChanged = true;
      if (key === 'resources' && settings.subscribe === true) feature.subscribe = true;
    }
    if (isObject(offered.extensions)) addExtensions(extensions, offeredBy, outcome.server, offered.extensions);
    if (
      typeof result.instructions === 'string' &&
      result.instructions.trim() &&
      (!reach || reach.seesAll(outcome.server))
    ) {
      instructions.push(`## ${outcome.server}\n${result.instructions.trim()}`);
    }
    ttlMs = Math.min(ttlMs, partTtlMs(result));
    if (result.cacheScope !== 'public') cacheScope = 'private';
  }
  const result: JsonObject = {
    resultType: 'complete',
    supportedVersions: [...SUPPORTED_VERSIONS],
    capabilities,
    ttlMs: Number.isFinite(ttlMs) && complete ? ttlMs : 0,
    cacheScope: limited ? 'private' : cacheScope,
    _meta: { [META.serverInfo]: GATEWAY_INFO },
  };
  if (Object.keys(offeredBy).length) {
    capabilities.extensions = extensions;
    (result._meta as JsonObject)[EXTENSION_SERVERS_META] = offeredBy;
  }
  if (instructions.length)
    result.instructions =
      `Tools and prompts here are named ` + `<server>${separator}<name>.\n\n${instructions.join('\n\n')}`;
  return result;
}

/**
 * An upstream's extensions into the merged ones: listed when any server offers one (its settings as the
 * first server in config order gives them), and the servers that offer each, in config order.
 */
function addExtensions(
  extensions: JsonObject,
  offeredBy: Record<string, string[]>,
  server: string,
  offered: JsonObject,
): void {
  for (const [id, settings] of Object.entries(offered)) {
    if (!isObject(settings)) continue;
    extensions[id] ??= settings;
    (offeredBy[id] ??= []).push(server);
  }
}

/**
 * How long one upstream's part of a merged answer stays fresh: its ttlMs, whole milliseconds, 0 when absent
 * or not positive. A ttlMs beyond a double (u64::MAX for "keep it") is kept as written: still long, not none.
 */
export function partTtlMs(result: JsonObject): number {
  const given = numberOf(result.ttlMs);
  return given !== undefined && given > 0 ? Math.floor(given) : 0;
}
