// In front of a perCaller server whose children take each caller's own values (pasted secrets:, or an OAuth
// token by credentials.env), above the MRTR bridge, so its connect answer is the caller's and never a 2025
// server's held call: a caller without their values gets the connect link instead of a child. The client's
// retry after that answer carries the gateway's own requestState and the elicitation's inputResponses;
// both are the gateway's, not the server's, so they are taken off here and the original request goes on as
// it first came (docs/design.md lists this rewrite).
import type { CallerIdentity, RequestOptions, Upstream } from '../../../bridge/upstream.js';
import type { JsonRpcId, JsonRpcRequest, JsonRpcResponse } from '../../../protocol/jsonrpc.js';
import { UpstreamWrapper } from '../upstream-wrapper.js';
import { placeholderAnswer } from '../../aggregate/index.js';
import type { CredentialStore } from '../../credentials/index.js';
import type { ChildEnvSource, GoneListener } from './per-caller-upstream.js';

/** What the gate asks of a caller's values before each call. */
export interface CallerEnvGate {
  /** The requestState of the gate's own connect answers: their retry is the original request again. */
  readonly requestState: string;
  /** undefined: the caller may go on (their values are there); else what they get instead (connect first). */
  before(caller: CallerIdentity, message: JsonRpcRequest): Promise<((id: JsonRpcId) => JsonRpcResponse) | undefined>;
}

/** A perCaller server's source of each caller's values: what starts their child, and what gates their calls. */
export type CallerEnv = ChildEnvSource & CallerEnvGate;

/**
 * A CallerEnv's onGone, for secrets and OAuth tokens alike: its listeners hear of one caller whose values a
 * call found gone (`tell`, revoked here or on another replica), and of any change this process made to the
 * server's records (undefined: recheck each child).
 */
export class GoneListeners {
  private readonly listeners: GoneListener[] = [];

  constructor(
    private readonly store: CredentialStore,
    private readonly server: string,
  ) {}

  add(listener: GoneListener): void {
    this.listeners.push(listener);
    this.store.onChange((server, change) => {
      if (server === this.server) listener(undefined, change.isFor);
    });
  }

  tell(principal: string): void {
    for (const listener of this.listeners) listener(principal);
  }
}

export class SecretGate extends UpstreamWrapper {
  constructor(
    inner: Upstream,
    private readonly values: CallerEnvGate,
  ) {
    super(inner);
  }

  async request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    const caller = options.caller;
    // No caller: the per-caller layer below says what is wrong.
    if (caller === undefined) return this.inner.request(message, options);
    const own = this.withoutOwnRetryState(message);
    const instead = await this.values.before(caller, own);
    // Discovery and the lists never need the caller's values: one yet to paste them learns what they will reach
    // once they do, and lists the connect tool.
    if (instead) return placeholderAnswer(message, this.name, 'secrets') ?? instead(message.id);
    return this.inner.request(own, options);
  }

  private withoutOwnRetryState(message: JsonRpcRequest): JsonRpcRequest {
    const params = message.params;
    if (params?.requestState !== this.values.requestState) return message;
    const { requestState: _state, inputResponses: _responses, ...rest } = params;
    return { ...message, params: rest };
  }
}
