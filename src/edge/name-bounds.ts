// Length bounds on what a request names: a tool or prompt name, a resource URI. Checked right after the
// message is read, before any routing, glob or policy work, on every endpoint and for both eras (and for
// search mode's call_tool, whose name comes from its arguments: search-step.ts). Without them a name is
// bounded only by listen.maxBodyBytes (4 MiB), and every glob a policy or profile matches it against costs
// time in proportion to it, on the one thread that also answers everybody else. A length check costs
// nothing measurable and allocates nothing when the name passes.
import { isObject, type JsonObject } from '../../protocol/jsonrpc.js';

/** Tool and prompt names: the MCP spec's guidance (1-128 characters). */
export const MAX_NAME_LENGTH = 128;
/** Resource URIs (and completion refs): ample for real URIs (browsers' own limits are near this), far below a body. */
export const MAX_URI_LENGTH = 8192;
/** URIs one subscriptions/listen may subscribe to. */
export const MAX_LISTEN_URIS = 1024;
/** How much of a refused value an error message, a log or an audit line quotes. */
export const QUOTED_PREFIX = 64;

/** A value as refusals quote it: JSON, at most QUOTED_PREFIX characters of it, and its length when cut. */
export function quoted(value: unknown): string {
  if (typeof value !== 'string') {
    const text =
      typeof value === 'object' && value !== null
        ? Array.isArray(value)
          ? 'an array'
          : 'an object'
        : JSON.stringify(value);
    return text ?? String(value);
  }
  if (value.length <= QUOTED_PREFIX) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, QUOTED_PREFIX))}… (${value.length} characters)`;
}

/** The problem with a tool or prompt name's length, or undefined. */
export function nameTooLong(kind: 'tool' | 'prompt', name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length <= MAX_NAME_LENGTH) return undefined;
  return (
    `The ${kind} name ${quoted(name)} is longer than ${MAX_NAME_LENGTH} characters, the most MCP allows a ` +
    `${kind} name; no ${kind} has that name`
  );
}

function uriTooLong(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || uri.length <= MAX_URI_LENGTH) return undefined;
  return `The resource URI ${quoted(uri)} is longer than ${MAX_URI_LENGTH} characters, the most mcp-gateway accepts`;
}

/**
 * What is too long in a request's params, by method, or undefined; `search` is true on a search-mode
 * endpoint, where call_tool's `arguments.name` is a tool name too. Reads only what the method names.
 */
export function nameProblem(method: string, params: JsonObject | undefined, search = false): string | undefined {
  if (params === undefined) return undefined;
  switch (method) {
    case 'tools/call': {
      const own = nameTooLong('tool', params.name);
      if (own !== undefined || !search || params.name !== 'call_tool' || !isObject(params.arguments)) return own;
      return nameTooLong('tool', params.arguments.name);
    }
    case 'prompts/get':
      return nameTooLong('prompt', params.name);
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return uriTooLong(params.uri);
    case 'completion/complete': {
      const ref = params.ref;
      return isObject(ref) ? (nameTooLong('prompt', ref.name) ?? uriTooLong(ref.uri)) : undefined;
    }
    case 'subscriptions/listen': {
      const asked = isObject(params.notifications) ? params.notifications.resourceSubscriptions : undefined;
      if (!Array.isArray(asked)) return undefined;
      if (asked.length > MAX_LISTEN_URIS)
        return (
          `resourceSubscriptions names ${asked.length} URIs; one listen stream may subscribe to at most ` +
          `${MAX_LISTEN_URIS}`
        );
      for (const uri of asked) {
        const problem = uriTooLong(uri);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}
