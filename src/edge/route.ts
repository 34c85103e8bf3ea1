// The route step: where the request goes, placed once by the router (src/aggregate/router.ts) before policy
// judges it. On /mcp every named request is placed, as the call goes to the owner under its own name; on
// /servers/<name>/mcp the endpoint is the destination and only the guard asks where the name sits on /mcp;
// on a profile (/profiles/<name>/mcp, /search/mcp) a public name is translated to the /mcp name first.
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { PLAIN_TARGET } from '../../policy/target.js';
import type { McpCall } from './call.js';
import { routeThroughView } from './views.js';

export function route(call: McpCall, message: JsonRpcRequest): void {
  const router = call.edge.router;
  // A profile or search mode: the caller's public name becomes the /mcp name first (views.ts).
  const view = call.endpoint?.view;
  if (view !== undefined && router) {
    call.target = routeThroughView(router, view, message);
    return;
  }
  // Guardrails choose their rules by the /mcp name, as the guard does: a server's endpoint asks for it too.
  const judged =
    (call.security.guard !== undefined && call.grant !== undefined) || call.security.guardrails !== undefined;
  call.target = router && (call.server === undefined || judged) ? router.resolve(call.server, message) : PLAIN_TARGET;
}
