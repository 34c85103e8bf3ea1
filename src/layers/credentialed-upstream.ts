// The layer that sends each caller to a server as themselves: it asks the server's credential source
// (token exchange, or the caller's stored OAuth token) for this caller's Authorization and hands it to
// the transport as a per-request option; the transport knows nothing of who that is. A caller's answers
// are made `cacheScope: "private"` here, whatever the server claimed: an answer fetched with one caller's
// token is that caller's only (docs/design.md lists this rewrite). What a source is and gives is the
// credentials' own word (src/credentials/credential-source.ts): a credential store knows no stack.
import type { CallerIdentity, RequestOptions } from '../../bridge/upstream.js';
import { optionsWith } from '../../bridge/request-options.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import { challengeOf } from '../../protocol/auth-challenge.js';
import { UpstreamWrapper } from './upstream-wrapper.js';
import type { Upstream } from '../../bridge/upstream.js';
import { bearerParameters, connectState, type CredentialSource, type Instead } from '../credentials/index.js';
import { placeholderAnswer } from '../aggregate/index.js';

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
        errorResponse(
          message.id,
          ErrorCode.InternalError,
          `servers.${this.name} is reached as each caller, and this request came with no caller to reach it as`,
          {
            server: this.name,
          },
        ),
      );
    }
    // The retry of our own "connect first" (URL elicitation): the requestState and answer were the gateway's,
    // so the server gets the request as it was first sent.
    if (message.params?.requestState === connectState(this.name)) message = withoutConnectRound(message);
    const authorization = this.source.cached(caller);
    if (authorization !== undefined) return this.send(message, options, caller, authorization, true);
    return this.obtainThenSend(message, options, caller, true);
  }

  private async obtainThenSend(
    message: JsonRpcRequest,
    options: RequestOptions,
    caller: CallerIdentity,
    mayRetry: boolean,
  ): Promise<JsonRpcResponse> {
    const obtained = await this.source.obtain(caller, message);
    if ('authorization' in obtained) return this.send(message, options, caller, obtained.authorization, mayRetry);
    // Discovery and the lists never need a credential: a caller yet to connect learns what they will reach once
    // they do, and lists the connect tool.
    const placeholder = this.source.sharedIdentity ? undefined : placeholderAnswer(message, this.name, 'account');
    return placeholder ?? this.answerInstead(message, obtained);
  }

  private answerInstead(message: JsonRpcRequest, obtained: Instead): JsonRpcResponse {
    if ('answer' in obtained) return obtained.answer(message.id);
    return errorResponse(message.id, obtained.code ?? ErrorCode.InternalError, obtained.refused, {
      server: this.name,
      ...obtained.data,
    });
  }

  private async send(
    message: JsonRpcRequest,
    options: RequestOptions,
    caller: CallerIdentity,
    authorization: string,
    mayRetry: boolean,
  ): Promise<JsonRpcResponse> {
    const own = optionsWith(options, options.signal);
    own.authorization = authorization;
    const response = await this.inner.request(message, own);
    const refusedStatus = credentialRefused(response);
    if (refusedStatus === 401) {
      // Not run by the server (it refused the credential first): safe to send again with a fresh one, once.
      await this.source.rejected(caller, authorization, response);
      if (mayRetry) return this.obtainThenSend(message, options, caller, false);
    }
    if (refusedStatus === 403 && this.source.stepUp) {
      // Refused for want of scope, before it ran: the caller grants more in the browser, then retries.
      const challenge = bearerParameters(challengeOf(response) ?? '');
      if (challenge.error === 'insufficient_scope') {
        const scopes = (challenge.scope ?? '').split(' ').filter(Boolean);
        return this.answerInstead(message, await this.source.stepUp(caller, authorization, scopes, message));
      }
    }
    if (refusedStatus !== undefined && 'error' in response) {
      // The transport's wording blames the gateway's static headers; here it was this caller's own credential.
      response.error.message =
        `Upstream '${this.name}' refused this caller's credential for ${message.method} ` + `(HTTP ${refusedStatus})`;
    }
    keepPrivate(response);
    return response;
  }
}

function withoutConnectRound(message: JsonRpcRequest): JsonRpcRequest {
  const { requestState: _state, inputResponses: _answers, ...params } = message.params!;
  return { jsonrpc: message.jsonrpc, id: message.id, method: message.method, params };
}

/** 401 or 403 when the transport answered that the server refused the request's credential. */
function credentialRefused(response: JsonRpcResponse): number | undefined {
  if (!('error' in response) || !isObject(response.error.data)) return undefined;
  const status = response.error.data.httpStatus;
  return status === 401 || status === 403 ? status : undefined;
}

function keepPrivate(response: JsonRpcResponse): void {
  if ('result' in response && isObject(response.result) && response.result.cacheScope === 'public')
    response.result.cacheScope = 'private';
}
