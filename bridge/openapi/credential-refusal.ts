// A REST API refusing the caller's own credential (servers.<name>.credentials), told as a remote MCP server's
// refusal is: a JSON-RPC error with data.httpStatus and the WWW-Authenticate challenge marked on it
// (protocol/auth-challenge.ts), so the layer holding the credential (src/layers/credentialed-upstream.ts) drops
// a refused token and tries once more with a fresh one, or asks the caller to grant a missing scope. A 401
// always refuses the credential; a 403 only when its challenge says insufficient_scope (any other 403 is the
// API's answer about the thing asked for, and stays a tool error the model can read).
import { markChallenge } from '../../protocol/auth-challenge.js';
import { ErrorCode, errorResponse, type JsonRpcId, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { RestOutcome } from './rest-client.js';

const INSUFFICIENT_SCOPE = /(?:^|[\s,])error\s*=\s*"?insufficient_scope"?/i;

export function credentialRefusal(
  id: JsonRpcId,
  outcome: Extract<RestOutcome, { kind: 'answer' }>,
  where: { name: string; url: string },
): JsonRpcResponse | undefined {
  const { status, challenge } = outcome;
  if (status !== 401 && !(status === 403 && challenge !== undefined && INSUFFICIENT_SCOPE.test(challenge)))
    return undefined;
  return markChallenge(
    errorResponse(id, ErrorCode.InternalError, `The REST API refused the caller's credential with HTTP ${status}`, {
      server: where.name,
      url: where.url,
      httpStatus: status,
    }),
    challenge,
  );
}
