// In front of a perCaller server with secrets: (above the MRTR bridge, so its connect answer is the
// caller's and never a 2025 server's held call): a caller without their values gets the link to the paste
// page instead of a child. The client's retry after that answer carries the gateway's own requestState
// and the elicitation's inputResponses; both are the gateway's, not the server's, so they are taken off
// here and the original request goes on as it first came (docs/design.md lists this rewrite).
import type { RequestOptions, Upstream } from '../../../bridge/upstream.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../../protocol/jsonrpc.js';
import { UpstreamWrapper } from '../upstream-wrapper.js';
import type { SecretEnv } from './secret-env.js';

export class SecretGate extends UpstreamWrapper {
  constructor(
    inner: Upstream,
    private readonly secrets: SecretEnv,
  ) {
    super(inner);
  }

  async request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    const principal = options.caller?.principal;
    // No caller: the per-caller layer below says what is wrong.
    if (principal === undefined) return this.inner.request(message, options);
    const own = this.withoutOwnRetryState(message);
    if ((await this.secrets.values(principal)) === undefined) {
      this.secrets.gone(principal);
      return (await this.secrets.connectFirst(principal, own))(message.id);
    }
    return this.inner.request(own, options);
  }

  private withoutOwnRetryState(message: JsonRpcRequest): JsonRpcRequest {
    const params = message.params;
    if (params?.requestState !== this.secrets.requestState) return message;
    const { requestState: _state, inputResponses: _responses, ...rest } = params;
    return { ...message, params: rest };
  }
}
