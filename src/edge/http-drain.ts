// Closing the HTTP listener without dropping a request: stop accepting, close keep-alive connections that
// are idle, and let busy ones finish their answer with `Connection: close`, so a client's next request opens
// a new connection (to another replica) instead of meeting a closed socket.
import type { Server, ServerResponse } from 'node:http';

export class HttpDrain {
  private closing = false;
  /** Answers not yet finished, so closing can mark them. */
  private readonly open = new Set<ServerResponse>();
  /**
   * One listener shared by every answer ('close' calls it with the answer as `this`, once: a response is
   * never reused): a closure and a once-wrapper per request were the drain's whole cost on the hot path.
   */
  private readonly untrack: (this: ServerResponse) => void;

  constructor(private readonly server: Server) {
    const open = this.open;
    this.untrack = function (this: ServerResponse) {
      open.delete(this);
    };
  }

  /** Called for every request as it arrives. */
  track(outgoing: ServerResponse): void {
    if (this.closing) {
      // It came on a connection that was busy when the listener closed: serve it, and end the connection.
      outgoing.setHeader('connection', 'close');
      return;
    }
    this.open.add(outgoing);
    outgoing.on('close', this.untrack);
  }

  /** Stops accepting connections; resolves once every connection has closed. */
  close(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    for (const outgoing of this.open) {
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
