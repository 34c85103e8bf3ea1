// A method the core removed but an extension took up again (tasks/get, tasks/cancel: the Tasks extension
// reuses 2025-11-25's names) reaches a server only when that server advertises the extension in its
// server/discover; otherwise it is refused as removed, as the core says. The discover is read through the
// server's stack, so a cacheable answer costs no extra hop; only such methods pay for it.
import { ErrorCode, isObject } from '../../protocol/jsonrpc.js';
import { CORE_REMOVED_METHODS, extensionOf } from '../../protocol/mcp.js';
import { ownRequestMeta } from '../../infra/own-request-meta.js';
import type { McpCall } from './call.js';
import { reject, type Rejection } from './rejection.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';

/** Undefined when the request may go on; a refusal when its method is removed and not taken up here. */
export function checkTakenUp(call: McpCall, message: JsonRpcRequest): Promise<Rejection | undefined> | undefined {
  const method = message.method;
  if (call.server === undefined || !CORE_REMOVED_METHODS.has(method)) return undefined;
  const extension = extensionOf(method);
  if (extension === undefined) return undefined; // refused by request-rules already
  return advertises(call, extension).then((yes) =>
    yes
      ? undefined
      : reject(
          404,
          message.id,
          ErrorCode.MethodNotFound,
          `${method} was removed in MCP 2026-07-28; server ${call.server} does not advertise the extension ` +
            `${extension} that takes it up`,
        ),
  );
}

/** Whether the server's server/discover lists the extension under capabilities.extensions. */
export async function advertises(call: McpCall, extension: string): Promise<boolean> {
  const discover = { jsonrpc: '2.0' as const, id: 0, method: 'server/discover', params: { _meta: ownRequestMeta() } };
  const answer = await call.endpoint!.upstream.request(discover, {
    authContext: call.callerContext,
    reach: call.grant,
  });
  if (!('result' in answer)) return false;
  const capabilities = answer.result.capabilities;
  return isObject(capabilities) && isObject(capabilities.extensions) && isObject(capabilities.extensions[extension]);
}
