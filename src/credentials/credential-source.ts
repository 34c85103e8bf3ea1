// What a server's credential source is and gives, said by the credentials themselves: the stack's layer
// (src/layers/credentialed-upstream.ts) asks a source, and the sources (token exchange, the OAuth client, a
// per-caller child's token) answer it, without any of them knowing there is a stack.
import type { CallerIdentity } from '../../bridge/upstream.js';
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';

/**
 * What a source gives for a caller: their Authorization, a refusal to tell them, or an answer of its own (connect
 * first).
 */
export type Obtained = { authorization: string } | Instead;
/** What the caller gets instead of the server's answer: a refusal, or an answer of the source's own. */
export type Instead =
  | { refused: string; data?: Record<string, unknown>; code?: number }
  | { answer: (id: JsonRpcId) => JsonRpcResponse };

export interface CredentialSource {
  /** The hot path: this caller's Authorization from memory, or undefined (then obtain). */
  cached(caller: CallerIdentity): string | undefined;
  /** Gets one: an exchange, a refresh, a read of the store; or says what the caller must do. */
  obtain(caller: CallerIdentity, message: JsonRpcRequest): Promise<Obtained>;
  /** The server refused `authorization` (HTTP 401): forget it (settled before the retry obtains another). */
  rejected(caller: CallerIdentity, authorization: string, response: JsonRpcResponse): void | Promise<void>;
  /**
   * The gateway's own identity, the same for every caller (client_credentials): nobody connects it, so a caller
   * whose list it cannot get a token for is told why, not shown a connect tool.
   */
  readonly sharedIdentity?: boolean;
  /**
   * The server refused `authorization` with 403 `insufficient_scope`, naming `scopes` (the MCP spec's
   * step-up): a connect link asking for more, or the reason it is hopeless. Absent: the 403 is the answer.
   */
  stepUp?(caller: CallerIdentity, authorization: string, scopes: string[], message: JsonRpcRequest): Promise<Instead>;
}

/** The requestState of the gateway's own URL elicitation for `server` (oauth/oauth-client.ts issues it). */
export function connectState(server: string): string {
  return `connect:${server}`;
}
