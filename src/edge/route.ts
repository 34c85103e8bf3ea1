// The route step: where the request goes, placed once by the router (src/aggregate/router.ts) before policy
// judges it. On /mcp every named request is placed, as the call goes to the owner under its own name; on
// /servers/<name>/mcp the endpoint is the destination and only the guard asks where the name sits on /mcp.
import type { JsonRpcRequest } from '../protocol/jsonrpc.js';
import { PLAIN_TARGET } from '../../policy/target.js';
import type { McpCall } from './call.js';

export function route(call: McpCall, message: JsonRpcRequest): void {
  const router = call.edge.router;
  const judged = call.security.guard !== undefined && call.grant !== undefined;
  call.target = router && (call.server === undefined || judged) ? router.resolve(call.server, message) : PLAIN_TARGET;
}
