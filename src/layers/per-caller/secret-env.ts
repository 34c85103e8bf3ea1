// servers.<name>.secrets on a perCaller server: each caller's own values for the child's environment,
// kept encrypted in the credential store (src/credentials/store.ts, a record of kind "secret" per principal
// and server). A caller without them gets a single-use link to the gateway's paste page (secret-routes.ts),
// as URL-mode elicitation when their client declared elicitation.url, else as a JSON-RPC error carrying the
// link: never form-mode elicitation, which the spec forbids for secrets. The values go into that caller's
// child only; nothing here logs or returns them.
import type { CallerIdentity } from '../../../bridge/upstream.js';
import { type JsonRpcId, type JsonRpcRequest, type JsonRpcResponse, errorResponse } from '../../../protocol/jsonrpc.js';
import {
  acceptsUrlElicitation,
  CONNECT_REQUIRED,
  connectRequiredData,
  type UrlElicitation,
} from '../../../protocol/connect-link.js';
import type { CredentialStore, SecretPending, SecretRecord } from '../../credentials/index.js';
import type { Admission, GoneListener } from './per-caller-upstream.js';
import { type CallerEnv, GoneListeners } from './secret-gate.js';

// "Connect first" is answered with the OAuth connect flow's own code (URL elicitation required).

export interface SecretEnvSettings {
  server: string;
  /** Environment variable → the prompt shown for it. */
  secrets: Readonly<Record<string, { prompt: string }>>;
  publicUrl: string;
  linkTtlMs: number;
}

export class SecretEnv implements CallerEnv {
  private readonly names: readonly string[];
  private readonly goneListeners: GoneListeners;

  constructor(
    private readonly store: CredentialStore,
    readonly settings: SecretEnvSettings,
  ) {
    this.names = Object.keys(settings.secrets);
    this.goneListeners = new GoneListeners(store, settings.server);
  }

  /** The requestState a connect answer carries: its retry is the caller's original request again. */
  get requestState(): string {
    return `secret:${this.settings.server}`;
  }

  /**
   * Hears of callers whose values may be gone: `principal` when a call found none (revoked, here or on
   * another replica), undefined when this process changed some record of this server (recheck each child).
   */
  onGone(listener: GoneListener): void {
    this.goneListeners.add(listener);
  }

  reread(principal: string): Promise<unknown> {
    return this.store.get(principal, this.settings.server);
  }

  /** A call found the caller without values: their child, if one runs, must go. */
  gone(principal: string): void {
    this.goneListeners.tell(principal);
  }

  /** The caller's complete set of values, or undefined (none, or one missing). */
  async values(principal: string): Promise<SecretRecord | undefined> {
    const record = await this.store.get(principal, this.settings.server);
    if (record?.kind !== 'secret') return undefined;
    return this.names.every((name) => typeof record.values[name] === 'string' && record.values[name] !== '')
      ? record
      : undefined;
  }

  /** Which stored record the caller's child runs with now, from memory: undefined when not known here. */
  version(principal: string): number | null | undefined {
    const record = this.store.cached(principal, this.settings.server);
    if (record === undefined) return undefined;
    return record?.kind === 'secret' ? record.connectedAt : null;
  }

  /**
   * Before each call: a caller whose values are gone (revoked, maybe on another replica) loses their child and gets the
   * link.
   */
  async before(
    caller: CallerIdentity,
    message: JsonRpcRequest,
  ): Promise<((id: JsonRpcId) => JsonRpcResponse) | undefined> {
    if ((await this.values(caller.principal)) !== undefined) return undefined;
    this.gone(caller.principal);
    return this.connectFirst(caller.principal, message);
  }

  async admit(caller: CallerIdentity, message: JsonRpcRequest): Promise<Admission> {
    const record = await this.values(caller.principal);
    if (record === undefined) return { answer: await this.connectFirst(caller.principal, message) };
    const env: Record<string, string> = {};
    for (const name of this.names) env[name] = record.values[name]!;
    return { env, version: record.connectedAt };
  }

  /** The link to the paste page, as URL-mode elicitation or as an error carrying it. */
  async connectFirst(principal: string, message: JsonRpcRequest): Promise<(id: JsonRpcId) => JsonRpcResponse> {
    const { server, publicUrl, linkTtlMs } = this.settings;
    const pending: SecretPending = { step: 'secret', principal, server };
    // One live link per principal and server: a second call while it is live gets the same.
    const link = await this.store.putPending(pending, linkTtlMs, `secret\u0000${principal}\u0000${server}`);
    const url = `${publicUrl}/secrets/${link}`;
    const text =
      `${server} needs ${this.names.join(', ')} of your own: open ${url} (single use, valid ` +
      `${Math.round(linkTtlMs / 60_000)} min), paste it there, then try again.`;
    const elicitation: UrlElicitation = { mode: 'url', url, elicitationId: link.slice(0, 16), message: text };
    if (acceptsUrlElicitation(message)) {
      return (id) => ({
        jsonrpc: '2.0',
        id,
        result: {
          resultType: 'input_required',
          inputRequests: {
            [`secret-${server}`]: { method: 'elicitation/create', params: elicitation },
          },
          requestState: this.requestState,
        },
      });
    }
    return (id) => errorResponse(id, CONNECT_REQUIRED, text, connectRequiredData(elicitation, { server }));
  }
}
