// server/discover on a view (/profiles/<name>/mcp, /search/mcp): /mcp's answer, retold for the view. A host
// reads discover to learn what an endpoint is and offers; on a profile that is the profile — its own name,
// only the features it can show, and no instructions that could name tools it hides or renames — and in
// search mode, that tools are found with search_tools rather than listed.
import { isObject, type JsonObject } from '../../protocol/jsonrpc.js';
import { META } from '../../protocol/mcp.js';
import { type Profile, SEARCH_PROFILE } from './profile.js';

export const SEARCH_INSTRUCTIONS =
  'Tools here are not listed one by one: call search_tools with a few words saying what you want to do, ' +
  'then call_tool with the name it returns and arguments that match its inputSchema.';

/** /mcp's discover result as the view describes itself; ttlMs, cacheScope and versions stay /mcp's. */
export function describeView(profile: Profile, result: JsonObject): JsonObject {
  const described: JsonObject = {
    ...result,
    capabilities: capabilitiesOf(profile, isObject(result.capabilities) ? result.capabilities : {}),
  };
  const meta = isObject(result._meta) ? result._meta : {};
  const info = meta[META.serverInfo];
  described._meta = { ...meta, [META.serverInfo]: serverInfoOf(profile, isObject(info) ? info : {}) };
  const instructions = instructionsOf(
    profile,
    typeof result.instructions === 'string' ? result.instructions : undefined,
  );
  if (instructions === undefined) delete described.instructions;
  else described.instructions = instructions;
  return described;
}

/** The features /mcp offers that this view can show; in search mode, tools always (its two own). */
function capabilitiesOf(profile: Profile, offered: JsonObject): JsonObject {
  const capabilities: JsonObject = {};
  // Search mode's tools/list is always the same two tools: it never changes, whatever /mcp's does.
  if (profile.search) capabilities.tools = {};
  else if (offered.tools !== undefined && profile.mayShow('tools')) capabilities.tools = offered.tools;
  if (offered.prompts !== undefined && profile.mayShow('prompts')) capabilities.prompts = offered.prompts;
  if (offered.resources !== undefined && profile.mayShow('resources')) capabilities.resources = offered.resources;
  // Completions complete prompt arguments and resource template variables: nothing to complete without either.
  if (offered.completions !== undefined && (capabilities.prompts !== undefined || capabilities.resources !== undefined))
    capabilities.completions = offered.completions;
  if (offered.logging !== undefined) capabilities.logging = offered.logging;
  // Extensions are /mcp's (merged-discover.ts): which server offers each stays in _meta, as on /mcp.
  if (offered.extensions !== undefined) capabilities.extensions = offered.extensions;
  return capabilities;
}

/** The gateway's serverInfo, named after the endpoint: `mcp-gateway/profiles/<name>`, `mcp-gateway/search`. */
function serverInfoOf(profile: Profile, gateway: JsonObject): JsonObject {
  const base = typeof gateway.name === 'string' ? gateway.name : 'mcp-gateway';
  if (profile === SEARCH_PROFILE)
    return { ...gateway, name: `${base}/search`, title: `${base}: every tool, in search mode` };
  return {
    ...gateway,
    name: `${base}/profiles/${profile.name}`,
    title: `${base}: profile ${profile.name}${profile.search ? ', in search mode' : ''}`,
  };
}

/**
 * /mcp's instructions only where they hold (every tool and prompt shown as on /mcp); search mode says how to find
 * tools.
 */
function instructionsOf(profile: Profile, upstream: string | undefined): string | undefined {
  const kept = profile.showsAllAsIs ? upstream : undefined;
  if (!profile.search) return kept;
  return kept === undefined ? SEARCH_INSTRUCTIONS : `${SEARCH_INSTRUCTIONS}\n\n${kept}`;
}
