// The layer that sends each caller to a server as themselves: it asks the server's credential source
// (token exchange, or the caller's stored OAuth token) for this caller's Authorization and hands it to
// the transport as a per-request option; the transport knows nothing of who that is. A caller's answers
// are made `cacheScope: "private"` here, whatever the server claimed: an answer fetched with one caller's
// token is that caller's only (docs/design.md lists this rewrite).
import type { CallerIdentity, RequestOptions } from '../../bridge/upstream.js';
import { optionsWith } from '../../bridge/request-options.js';
import { ErrorCode, errorResponse, isObject, type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { UpstreamWrapper } from '../layers/upstream-wrapper.js';
import type { Upstream } from '../../bridge/upstream.js';

/** What a source gives for a caller: their Authorization, a refusal to tell them, or an answer of its own (connect first). */
export type Obtained = { authorization: string } | { refused: string; data?: Record<string, unknown> } | { answer: (id: JsonRpcId) => JsonRpcResponse };

export interface CredentialSource {
  /** The hot path: this caller's Authorization from memory, or undefined (then obtain). */
  cached(caller: CallerIdentity): string | undefined;
  /** Gets one: an exchange, a refresh, a read of the store; or says what the caller must do. */
  obtain(caller: CallerIdentity, message: JsonRpcRequest): Promise<Obtained>;
  /** The server refused `authorization` (HTTP 401): forget it. */
  rejected(caller: CallerIdentity, authorization: string, response: JsonRpcResponse): void;
}

export class CredentialedUpstream extends UpstreamWrapper {
  constructor(
    inner: Upstream,
    private readonly source: CredentialSource,
  ) {
    super(inner);
  }

  request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    const caller = options.caller;
    if (caller === undefined) {
      return Promise.resolve(
        errorResponse(message.id, ErrorCode.InternalError, `servers.${this.name} is reached as each caller, and this request came with no caller to reach it as`, {
          server: this.name,
        }),
      );
    }
    const authorization = this.source.cached(caller);
    if (authorization !== undefined) return this.send(message, options, caller, authorization, true);
    return this.obtainThenSend(message, options, caller, true);
  }

  private async obtainThenSend(message: JsonRpcRequest, options: RequestOptions, caller: CallerIdentity, mayRetry: boolean): Promise<JsonRpcResponse> {
    const obtained = await this.source.obtain(caller, message);
    if ('answer' in obtained) return obtained.answer(message.id);
    if ('refused' in obtained) return errorResponse(message.id, ErrorCode.InternalError, obtained.refused, { server: this.name, ...obtained.data });
    return this.send(message, options, caller, obtained.authorization, mayRetry);
  }

  private async send(message: JsonRpcRequest, options: RequestOptions, caller: CallerIdentity, authorization: string, mayRetry: boolean): Promise<JsonRpcResponse> {
    const own = optionsWith(options, options.signal);
    own.authorization = authorization;
    const response = await this.inner.request(message, own);
    const refusedStatus = credentialRefused(response);
    if (refusedStatus === 401) {
      // Not run by the server (it refused the credential first): safe to send again with a fresh one, once.
      this.source.rejected(caller, authorization, response);
      if (mayRetry) return this.obtainThenSend(message, options, caller, false);
    }
    if (refusedStatus !== undefined && 'error' in response) {
      // The transport's wording blames the gateway's static headers; here it was this caller's own credential.
      response.error.message = `Upstream '${this.name}' refused this caller's credential for ${message.method} (HTTP ${refusedStatus})`;
    }
    keepPrivate(response);
    return response;
  }
}

/** 401 or 403 when the transport answered that the server refused the request's credential. */
function credentialRefused(response: JsonRpcResponse): number | undefined {
  if (!('error' in response) || !isObject(response.error.data)) return undefined;
  const status = response.error.data.httpStatus;
  return status === 401 || status === 403 ? status : undefined;
}

function keepPrivate(response: JsonRpcResponse): void {
  if ('result' in response && isObject(response.result) && response.result.cacheScope === 'public') response.result.cacheScope = 'private';
}
