// The gateway's own requests to a 2025 client (elicitation, sampling, roots), sent on a call's SSE stream,
// and the client's answers, which arrive as later POSTs. An answer that lands on the replica that asked
// resolves the question here; one that lands elsewhere is relayed over the session's Redis channel to the
// replica that asked (which listens while it waits). Without Redis, an answer must reach the asking replica.
import { randomBytes } from 'node:crypto';
import type { CancelSignal } from '../../protocol/cancel.js';
import { textOf } from '../../protocol/exact-json.js';
import { isObject, type JsonObject } from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import type { SessionRelay } from './session-relay.js';

/** How long the gateway waits for a 2025 client to answer one of its requests (elicitation can be slow). */
const ANSWER_TIMEOUT_MS = 300_000;

const GONE = 'the client went away';

/** What became of a client's answer: handled here, sent to the replica that asked, or no one asked. */
export type AnswerOutcome = 'here' | 'relayed' | 'unknown';

export class ClientRequests {
  /** Requests this gateway sent a client, waiting for the client to POST the answer: `<session>\0<id>`. */
  private readonly awaiting = new Map<string, (answer: JsonObject) => void>();

  constructor(
    private readonly relay: Pick<SessionRelay, 'watch' | 'publish'> | undefined,
    private readonly log: Log,
  ) {}

  /** Sends each input request to the client and collects its answers (results), in order. */
  async ask(
    session: string,
    requests: JsonObject,
    send: (message: unknown) => void,
    signal: CancelSignal,
  ): Promise<{ answers: JsonObject } | { error: string }> {
    // Listening before the first question goes out: its answer may land on another replica at once.
    const unwatch = await this.relay?.watch(session);
    try {
      const answers: JsonObject = {};
      for (const [key, request] of Object.entries(requests)) {
        // Checked on every turn, after the watch's Redis round trip too: an abort listener added after the
        // client left is never called (ClientGone fires once), and the question would wait out the timeout.
        if (signal.aborted) return { error: GONE };
        if (!isObject(request) || typeof request.method !== 'string')
          return { error: `the server sent an input request "${key}" without a method` };
        const id = `mcp-gateway-${randomBytes(6).toString('base64url')}`;
        const waitKey = `${session}\0${id}`;
        const answer = new Promise<JsonObject | 'timeout' | 'gone'>((resolve) => {
          const settle = (outcome: JsonObject | 'timeout' | 'gone'): void => {
            clearTimeout(timer);
            signal.removeEventListener('abort', gone);
            resolve(outcome);
          };
          const timer = setTimeout(() => settle('timeout'), ANSWER_TIMEOUT_MS);
          const gone = (): void => settle('gone');
          signal.addEventListener('abort', gone, { once: true });
          this.awaiting.set(waitKey, settle);
        });
        send({ jsonrpc: '2.0', id, method: request.method, params: isObject(request.params) ? request.params : {} });
        const message = await answer;
        this.awaiting.delete(waitKey);
        if (message === 'gone') return { error: GONE };
        if (message === 'timeout') return { error: `the client did not answer ${request.method} in time` };
        if (isObject(message.error))
          return { error: `the client refused ${request.method}: ${String(message.error.message)}` };
        answers[key] = isObject(message.result) ? message.result : {};
      }
      return { answers };
    } finally {
      unwatch?.();
    }
  }

  /**
   * The client POSTed an answer (a JSON-RPC response). Rejects, naming the cause, only when the question was
   * not asked here and Redis could not carry the answer to the replica that asked.
   */
  async answer(session: string, message: JsonObject): Promise<AnswerOutcome> {
    if (this.deliver(session, message)) return 'here';
    if (!this.relay) return 'unknown';
    const heard = await this.relay.publish(session, { kind: 'answer', message });
    if (heard === 0)
      this.log.debug(
        { id: message.id },
        'a 2025 client answered a request no replica is waiting for (timed out, or its call ended)',
      );
    return heard === 0 ? 'unknown' : 'relayed';
  }

  /** An answer relayed from another replica (or received here): true when a question here was waiting for it. */
  deliver(session: string, message: JsonObject): boolean {
    const key = `${session}\0${textOf(message.id)}`; // a client may answer with any id, a 64-bit number too
    const resolve = this.awaiting.get(key);
    if (!resolve) return false;
    this.awaiting.delete(key);
    resolve(message);
    return true;
  }
}
