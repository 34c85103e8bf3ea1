// The link a gateway hands a caller who has not yet connected an upstream (or pasted its secrets), in the two forms
// a client can take it: URL-mode elicitation (an input_required result) for a request that declared it, and error
// -32042 otherwise. The error carries the link in two shapes: `url` beside `reason`, the gateway's own (its hosts,
// placeholders and docs read it), and `elicitations`, the 2025-11-25 revision's URLElicitationRequiredError, which
// 2025 hosts (SDK 1.x's UrlElicitationRequiredError among them) read to open the link for the person.
import { isObject, type JsonRpcRequest } from './jsonrpc.js';
import { declaredCapabilities } from './mcp.js';

/** URLElicitationRequiredError's code (2025-11-25); the gateway answers it to 2026 clients too. */
export const CONNECT_REQUIRED = -32042;

/** ElicitRequestURLParams: what a URL-mode elicitation asks the person to open, and why. */
export interface UrlElicitation {
  mode: 'url';
  url: string;
  elicitationId: string;
  message: string;
}

/** The request declared URL-mode elicitation in its capabilities (they are never remembered between requests). */
export function acceptsUrlElicitation(message: JsonRpcRequest): boolean {
  const elicitation = declaredCapabilities(message)?.elicitation;
  return isObject(elicitation) && isObject(elicitation.url);
}

/** The data of a -32042 error carrying the link: `extra`, then the gateway's fields, then the spec's array. */
export function connectRequiredData(
  elicitation: UrlElicitation,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { ...extra, url: elicitation.url, reason: 'connect_required', elicitations: [elicitation] };
}
