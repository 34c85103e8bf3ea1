// The one rule of where a call may go: only to baseUrl's origin. The rest client is bound to that origin, so
// an operation whose own `servers:` (or its path item's) names another host, port or scheme could only be sent
// to the wrong place: it is refused with the reason, which the log and a call of it both say, naming the two
// settings that settle it. A server URL that is not a URL once its variables take their defaults is refused
// too: the gateway cannot tell where it points, and sending it to baseUrl instead would be a guess.
import type { Operation } from './operations.js';
import { describeOperation } from './tool-names.js';

export type Placement = { readonly basePath: string } | { readonly refusal: string };

/** Where `operation`'s requests go under `base`: the path they are below, or why they may not be sent at all. */
export function placeOperation(operation: Operation, base: URL, where: string, toolName: string): Placement {
  if (operation.serverUrl === undefined) return { basePath: base.pathname };
  const own = urlOf(operation.serverUrl, base);
  if (own && own.origin === base.origin) return { basePath: own.pathname };
  const named = own ? own.origin : `${operation.serverUrl} (not a URL)`;
  const target = own ? `baseUrl: ${own.origin}${own.pathname === '/' ? '' : own.pathname} and ` : '';
  return {
    refusal:
      `${where}: ${describeOperation(operation)} names its own server ${named}, not ${base.origin} ` +
      `(${where}.baseUrl), and requests go only to baseUrl's origin, so the tool ${toolName} is left out. ` +
      `To call it, give it a server entry of its own (${target}operations.allow: [${toolName}]); to leave it ` +
      `out without this warning, set ${where}.operations.deny: [${toolName}]`,
  };
}

function urlOf(text: string, base: URL): URL | undefined {
  try {
    return new URL(text, base);
  } catch {
    return undefined;
  }
}
