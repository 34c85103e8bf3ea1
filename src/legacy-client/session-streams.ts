// A 2025 session's GET stream and its resource subscriptions. The stream lives in the process that serves
// the GET; resources/subscribe may arrive anywhere. With Redis, a subscription is kept in the session's
// shared set and announced on its channel, and the process holding the stream (listening to that channel
// while it does) applies it; a stream opened later, on any replica, starts from the set, so a replica keeps
// a session's subscriptions only while it holds the stream. Without Redis, both are this process's alone,
// and the subscriptions are kept until the session would expire (a client may subscribe before its GET).
import type { ServerResponse } from 'node:http';
import { ErrorCode, errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import type { LegacyStream, ListenAccess, ListenHub } from '../notify/index.js';
import { ExpiringSessions } from './expiring-sessions.js';
import type { SessionEvent, SessionRelay } from './session-relay.js';
import type { LegacySession } from './session-token.js';

interface OpenStream {
  stream: LegacyStream;
  outgoing: ServerResponse;
}

export class SessionStreams {
  private readonly streams = new Map<string, OpenStream>();
  /** Subscriptions of the sessions whose stream is here (and, without Redis, of every live session). */
  private readonly subscriptions = new ExpiringSessions<Set<string>>();

  constructor(
    private readonly listen: Pick<ListenHub, 'openLegacy'>,
    private readonly relay:
      | Pick<SessionRelay, 'watch' | 'publish' | 'addSubscription' | 'removeSubscription' | 'subscriptions'>
      | undefined,
    private readonly log: Log,
  ) {}

  /** Opens the session's GET stream on `outgoing` (its headers set, not yet written). */
  open(
    session: LegacySession,
    outgoing: ServerResponse,
    upstream: string | undefined,
    access: ListenAccess | undefined,
    principal?: string,
  ): void {
    const stream = this.listen.openLegacy(outgoing, upstream, access, principal);
    const open: OpenStream = { stream, outgoing };
    this.streams.set(session.id, open);
    for (const uri of this.subscriptions.get(session.id) ?? []) stream.subscribe(uri);
    let unwatch: (() => void) | undefined;
    let closed = false;
    outgoing.once('close', () => {
      closed = true;
      unwatch?.();
      if (this.streams.get(session.id) !== open) return;
      this.streams.delete(session.id);
      if (this.relay) this.subscriptions.delete(session.id); // the shared set has them for the next stream
    });
    // Listening first, then reading the set: a subscription made meanwhile on another replica is in one or the other.
    void this.relay?.watch(session.id).then((release) => {
      if (closed) return release();
      unwatch = release;
      return this.catchUp(session.id);
    });
  }

  /** resources/subscribe or resources/unsubscribe, from whichever replica the POST reached. */
  async subscribe(session: LegacySession, request: JsonRpcRequest): Promise<JsonRpcResponse> {
    const uri = request.params?.uri;
    if (typeof uri !== 'string')
      return errorResponse(request.id, ErrorCode.InvalidParams, 'params.uri (string) is required');
    const adding = request.method === 'resources/subscribe';
    const here = this.streams.get(session.id);
    if (here || !this.relay) {
      let uris = this.subscriptions.get(session.id);
      if (!uris) this.subscriptions.set(session.id, (uris = new Set()), session.expiresAt);
      if (adding) uris.add(uri);
      else uris.delete(uri);
    }
    if (adding) here?.stream.subscribe(uri);
    else here?.stream.unsubscribe(uri);
    if (this.relay) {
      try {
        if (adding) await this.relay.addSubscription(session.id, uri, session.expiresAt);
        else await this.relay.removeSubscription(session.id, uri);
        await this.relay.publish(session.id, { kind: adding ? 'subscribe' : 'unsubscribe', uri });
      } catch (error) {
        // The stream is here: this replica honours it, as it would without Redis.
        if (!here) {
          const why = error instanceof Error ? error.message : String(error);
          return errorResponse(
            request.id,
            ErrorCode.InternalError,
            `${request.method} could not be shared with the replica holding this session's GET stream: ${why}. ` +
              `Retry once Redis is back.`,
          );
        }
        this.log.warn(
          { uri, err: String(error) },
          `${request.method} honoured on this replica only: Redis is unreachable`,
        );
      }
    }
    return { jsonrpc: '2.0', id: request.id, result: {} };
  }

  /** A subscription change (or a resync) heard over Redis for a session whose stream may be here. */
  heard(session: string, event: SessionEvent): void {
    const here = this.streams.get(session);
    if (!here) return;
    const uris = this.subscriptions.get(session);
    if (event.kind === 'subscribe') {
      uris?.add(event.uri);
      here.stream.subscribe(event.uri);
    } else if (event.kind === 'unsubscribe') {
      uris?.delete(event.uri); // or a catch-up would bring it back
      here.stream.unsubscribe(event.uri);
    } else if (event.kind === 'resync') {
      void this.catchUp(session);
    }
  }

  /** Sessions whose subscriptions this process keeps (tests read it: none without a reason to). */
  get sessionsKept(): number {
    return this.subscriptions.size;
  }

  /** The session ended (here or on another replica): its stream ends, its subscriptions are forgotten. */
  end(session: string): void {
    this.subscriptions.delete(session);
    const here = this.streams.get(session);
    this.streams.delete(session);
    here?.outgoing.end();
  }

  /**
   * Adds the session's shared subscriptions to the stream here. (Only adds: an unsubscribe missed while
   * Redis was unreachable leaves a few extra updates until the client opens its stream again.)
   */
  private async catchUp(session: string): Promise<void> {
    let shared: string[];
    try {
      shared = await this.relay!.subscriptions(session);
    } catch {
      return; // logged by the relay; the next reconnect resyncs
    }
    const here = this.streams.get(session);
    if (!here) return;
    for (const uri of shared) here.stream.subscribe(uri);
  }
}
