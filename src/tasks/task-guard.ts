// The Tasks extension (io.modelcontextprotocol/tasks): a server MUST NOT answer a task to a request whose
// client did not declare the extension in its capabilities. A server that does anyway is answered for: the
// caller gets an error saying so, never a task it cannot follow. A plain check on the answer; nothing is
// allocated unless it is a task.
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import { declaredCapabilities, META, TASKS_EXTENSION } from '../../protocol/mcp.js';

export function refuseUndeclaredTask(message: JsonRpcRequest, response: JsonRpcResponse): JsonRpcResponse {
  if (!('result' in response) || response.result.resultType !== 'task' || declaresTasks(message)) return response;
  return errorResponse(
    message.id,
    ErrorCode.InternalError,
    `The server answered ${message.method} with a task, but this request did not declare the ${TASKS_EXTENSION} ` +
      `extension (params._meta["${META.clientCapabilities}"].extensions); mcp-gateway does not pass the task on`,
  );
}

export function declaresTasks(message: JsonRpcRequest): boolean {
  const extensions = declaredCapabilities(message)?.extensions;
  return isObject(extensions) && isObject(extensions[TASKS_EXTENSION]);
}
