// A server whose lists a caller cannot read until they connect it (servers.<name>.credentials type oauth:
// their own account; a perCaller server with secrets: their own values) is not left out of that caller's
// /mcp: its tools/list part is one tool of the gateway's own, `<prefix><separator>connect`, whose
// description says what it is for and whose call starts the connect flow. The call goes to the server's
// stack like a call of any of its tools (the credentials layer, or the secrets gate, answers it with the
// connect link: URL-mode elicitation or error -32042 with data.url), so there is one connect flow. Once
// the caller has connected, their lists are the server's own again, and the wiring tells their listen
// streams (src/gateway/build.ts). Such a part is the caller's own: it makes the merged page private.
import { isObject, type JsonObject, type JsonRpcId, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { LIST_ITEMS, META, SUPPORTED_VERSIONS, type ListMethod } from '../../protocol/mcp.js';
import { GATEWAY_INFO } from '../../infra/version.js';
import { CONNECTS_META } from '../../policy/target.js';

/** What a caller must connect before a server's lists can be read for them. */
export type ConnectKind = 'account' | 'secrets';

/** Which servers need a caller to connect first, and whether one has. Given by the wiring. */
export interface CallerConnections {
  /** undefined: the server's lists need nothing of the caller (static headers, token exchange, …). */
  needs(server: string): ConnectKind | undefined;
  /**
   * Whether this principal's credential for `server` is stored (a token due for refresh counts: it is refreshed on
   * use).
   */
  connected(server: string, principal: string): Promise<boolean>;
}

/**
 * The placeholder's name on the server's side; on /mcp it becomes `<prefix><separator>connect` as any tool name does.
 */
export const CONNECT_TOOL = 'connect';
/**
 * How long a list holding a placeholder may be kept: not at all. A client keeps a list for its ttlMs (the SDK v2
 * client does), and one with no listen stream (a stdio host behind mcp-remote) would show the connect tool for
 * that long after the person connected, in place of the tools they now have.
 */
const PLACEHOLDER_TTL_MS = 0;

/** The placeholder tool of `server`, under its server-side name (the aggregator namespaces it). */
export function placeholderTool(server: string, kind: ConnectKind): JsonObject {
  const what =
    kind === 'account'
      ? `Connects your own ${server} account through this gateway.`
      : `Gives ${server} values of your own that it needs (such as an API token).`;
  const then =
    kind === 'account'
      ? 'open it in a browser and sign in there'
      : 'open it in a browser and paste them there, never into this chat';
  return {
    name: CONNECT_TOOL,
    title: `Connect ${server}`,
    description:
      `${what} Until you do, ${server}'s tools cannot be listed for you, and this tool stands in for them. ` +
      `Calling it answers with a link (single use, valid a few minutes): ${then}, then come back. ${server}'s own ` +
      `tools then replace this one. Takes no arguments.`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    _meta: { [CONNECTS_META]: server },
  };
}

/**
 * A server's part of a list for a caller who has not connected it: the placeholder on the first page of
 * tools/list, nothing in any other list; private, and kept a while.
 */
export function placeholderPart(
  method: ListMethod,
  server: string,
  kind: ConnectKind,
  firstPage: boolean,
): JsonRpcResponse {
  const items = method === 'tools/list' && firstPage ? [placeholderTool(server, kind)] : [];
  return {
    jsonrpc: '2.0',
    id: 0,
    result: { resultType: 'complete', [LIST_ITEMS[method]]: items, ttlMs: PLACEHOLDER_TTL_MS, cacheScope: 'private' },
  };
}

/**
 * The answer a server's stack gives a caller who has not connected it, where that is not the connect flow: discover
 * (issue 46 item 1) and the lists, which on /servers/<name>/mcp hold the placeholder as /mcp's do, so a client that
 * lists before it calls sees the connect tool there too. Marked as the gateway's own (CONNECTS_META). Undefined for
 * any other request: the stack answers it with the connect flow.
 */
export function placeholderAnswer(
  message: { id: JsonRpcId; method: string; params?: JsonObject | undefined },
  server: string,
  kind: ConnectKind,
): JsonRpcResponse | undefined {
  if (message.method === 'server/discover') return placeholderDiscover(message.id, server);
  if (!Object.hasOwn(LIST_ITEMS, message.method)) return undefined;
  const part = placeholderPart(message.method as ListMethod, server, kind, message.params?.cursor === undefined);
  if (!('result' in part)) return part;
  return { jsonrpc: '2.0', id: message.id, result: { ...part.result, _meta: { [CONNECTS_META]: server } } };
}

/**
 * Whether a server's answer to a list is its connect flow rather than a list: the caller's token was
 * dropped since the check (a refresh refused), or their values are incomplete. A placeholder list from the
 * server's stack (placeholderAnswer) counts too: the aggregator shows its own part for it.
 */
export function isConnectAnswer(response: JsonRpcResponse): boolean {
  if ('error' in response) return isObject(response.error.data) && response.error.data.reason === 'connect_required';
  return response.result.resultType === 'input_required' || isPlaceholderDiscover(response.result);
}

/** The answer to the placeholder's call from a caller who has connected meanwhile: their list is stale. */
export function alreadyConnected(id: JsonRpcId, server: string): JsonRpcResponse {
  return {
    jsonrpc: '2.0',
    id,
    result: {
      resultType: 'complete',
      content: [
        {
          type: 'text',
          text:
            `You are connected to ${server}: list the tools again (tools/list) to see its own tools, which ` +
            `replace this one.`,
        },
      ],
    },
  };
}

/**
 * The server/discover answer for a caller who has not connected `server` yet (issue 46 item 1): discover never
 * needs a credential, and it says what the caller can reach once connected, tools at least, whose list changes
 * when they connect. A client that skips tools/list without a tools capability then sees the connect tool.
 * Marked as the gateway's own (CONNECTS_META), so /mcp does not learn the server's capabilities from it; kept
 * nowhere (ttlMs 0), as connecting changes it.
 */
export function placeholderDiscover(id: JsonRpcId, server: string): JsonRpcResponse {
  return {
    jsonrpc: '2.0',
    id,
    result: {
      resultType: 'complete',
      supportedVersions: [...SUPPORTED_VERSIONS],
      capabilities: { tools: { listChanged: true } },
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { [META.serverInfo]: GATEWAY_INFO, [CONNECTS_META]: server },
    },
  };
}

/** Whether a server/discover result is placeholderDiscover's, not the server's own. */
export function isPlaceholderDiscover(result: JsonObject): boolean {
  return isObject(result._meta) && typeof result._meta[CONNECTS_META] === 'string';
}
