// Closing the HTTP listener without dropping a request: stop accepting, close keep-alive connections that
// are idle, and let busy ones finish their answer with `Connection: close`, so a client's next request opens
// a new connection (to another replica) instead of meeting a closed socket.
import type { Server, ServerResponse } from 'node:http';

/** Finished answers are swept out once the set reaches this size, or twice what the last sweep left. */
const SWEEP_AT_LEAST = 64;

/** Written out or cut off: nothing left for closing to mark. */
const done = (outgoing: ServerResponse): boolean => outgoing.writableFinished || outgoing.destroyed;

export class HttpDrain {
  private closing = false;
  /**
   * Answers that may not be finished, so closing can mark them. Swept when it has grown, not on each
   * answer's 'close': a listener per request (beside ClientGone's) cost an array, a once-wrapper and a
   * closure on the hot path; a sweep costs a few nanoseconds per request, amortised.
   */
  private readonly open = new Set<ServerResponse>();
  private sweepAt = SWEEP_AT_LEAST;

  constructor(private readonly server: Server) {}

  /** Called for every request as it arrives. */
  track(outgoing: ServerResponse): void {
    if (this.closing) {
      // It came on a connection that was busy when the listener closed: serve it, and end the connection.
      outgoing.setHeader('connection', 'close');
      return;
    }
    this.open.add(outgoing);
    if (this.open.size >= this.sweepAt) this.sweep();
  }

  private sweep(): void {
    for (const outgoing of this.open) if (done(outgoing)) this.open.delete(outgoing);
    this.sweepAt = Math.max(SWEEP_AT_LEAST, 2 * this.open.size);
  }

  /** Stops accepting connections; resolves once every connection has closed. */
  close(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    for (const outgoing of this.open) {
      if (done(outgoing)) continue;
      if (!outgoing.headersSent) outgoing.setHeader('connection', 'close');
      // A stream whose headers went out saying keep-alive: its connection is idle once it ends; close it then.
      else outgoing.once('finish', () => setImmediate(() => this.server.closeIdleConnections()));
    }
    return closed;
  }

  /** Cuts every connection still open (the drain's time is up). */
  cut(): void {
    this.server.closeAllConnections();
  }
}
