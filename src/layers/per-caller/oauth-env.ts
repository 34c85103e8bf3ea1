// servers.<name>.credentials (type oauth, with env:) on a perCaller stdio server: each caller's own OAuth
// token in their own child's environment, under the variable `env` names. The token comes from the one
// OAuth client of src/credentials/ (the same store, connect link and refresh as a remote server's), with
// the authorization server the config names. A caller without one gets the connect link; a child runs
// with the token it was started with, so when that token changes (refreshed because it expired, connected
// again, revoked) the child is let go: a call in flight finishes on it, the next starts a child with the
// new token (src/layers/per-caller/per-caller-upstream.ts). Nothing here logs or returns a token.
import type { CallerIdentity } from '../../../bridge/upstream.js';
import {
  ErrorCode,
  errorResponse,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../protocol/jsonrpc.js';
import { connectState, type CredentialStore, type OAuthClient, type Obtained } from '../../credentials/index.js';
import type { Admission, GoneListener } from './per-caller-upstream.js';
import { type CallerEnv, GoneListeners } from './secret-gate.js';

const BEARER = 'Bearer ';

export class OAuthEnv implements CallerEnv {
  /** Each principal's token as last seen here, and the version number it was given (children are started with one). */
  private readonly seen = new Map<string, { authorization: string; version: number }>();
  private versions = 0;
  private readonly goneListeners: GoneListeners;

  constructor(
    private readonly client: OAuthClient,
    private readonly store: CredentialStore,
    /** The environment variable the child reads its token from. */
    readonly variable: string,
  ) {
    this.goneListeners = new GoneListeners(store, client.server);
  }

  get requestState(): string {
    return connectState(this.client.server);
  }

  /**
   * Before each call: a caller with a token goes on (one that expires soon is refreshed when their child is
   * started again, once); one without gets the connect link, and their child, if one runs (revoked on
   * another replica), goes.
   */
  async before(
    caller: CallerIdentity,
    message: JsonRpcRequest,
  ): Promise<((id: JsonRpcId) => JsonRpcResponse) | undefined> {
    if (this.client.cached(caller) !== undefined) return undefined;
    if ((await this.store.get(caller.principal, this.client.server))?.kind === 'oauth') return undefined;
    this.gone(caller.principal);
    const obtained = await this.client.obtain(caller, message);
    return 'authorization' in obtained ? undefined : this.answer(obtained);
  }

  async admit(caller: CallerIdentity, message: JsonRpcRequest): Promise<Admission> {
    const obtained = await this.client.obtain(caller, message);
    if (!('authorization' in obtained)) return { answer: this.answer(obtained) };
    return {
      env: { [this.variable]: obtained.authorization.slice(BEARER.length) },
      version: this.versionOf(caller.principal, obtained.authorization),
    };
  }

  /**
   * Which token the caller's child should run with, from memory: null when it is gone or expires soon (the
   * child goes; the next call refreshes or connects), undefined when not known here (keep the child).
   */
  version(principal: string): number | null | undefined {
    if (this.store.cached(principal, this.client.server) === undefined) return undefined;
    const authorization = this.client.cached({ principal });
    if (authorization === undefined) {
      this.seen.delete(principal);
      return null;
    }
    return this.versionOf(principal, authorization);
  }

  /** A token stored or removed in this process (connected, refreshed, revoked) has each child rechecked. */
  onGone(listener: GoneListener): void {
    this.goneListeners.add(listener);
  }

  reread(principal: string): Promise<unknown> {
    return this.store.get(principal, this.client.server);
  }

  private gone(principal: string): void {
    this.seen.delete(principal);
    this.goneListeners.tell(principal);
  }

  /** The same number for the same token; a new one when it changed. */
  private versionOf(principal: string, authorization: string): number {
    const seen = this.seen.get(principal);
    if (seen?.authorization === authorization) return seen.version;
    const version = ++this.versions;
    this.seen.set(principal, { authorization, version });
    return version;
  }

  private answer(obtained: Exclude<Obtained, { authorization: string }>): (id: JsonRpcId) => JsonRpcResponse {
    if ('answer' in obtained) return obtained.answer;
    const server = this.client.server;
    return (id) =>
      errorResponse(id, obtained.code ?? ErrorCode.InternalError, obtained.refused, { server, ...obtained.data });
  }
}
