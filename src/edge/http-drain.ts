// Closing the HTTP listener without dropping a request: stop accepting, close keep-alive connections that
// are idle, and let busy ones finish their answer with `Connection: close`, so a client's next request opens
// a new connection (to another replica) instead of meeting a closed socket.
//
// Nothing is tracked per request: the server makes its answers as DrainingResponse, whose head says
// `Connection: close` once the drain began, and connections that go idle during the drain (a stream that
// ends) are closed by a sweep that runs only then. A set of open answers and a 'close' listener on each was
// the drain's whole cost on the hot path, paid by every request for the one moment a replica stops.
import {
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  type Server,
  ServerResponse,
} from 'node:http';

type Head = OutgoingHttpHeaders | OutgoingHttpHeader[];

/** How often, while draining, connections whose last answer has ended are closed. */
const IDLE_SWEEP_MS = 50;

export class HttpDrain {
  private closing = false;
  private server: Server | undefined;
  /** The ServerResponse class to give createServer; then `attach` the server it made. */
  readonly Response: typeof ServerResponse<IncomingMessage>;

  constructor() {
    const drain = this;
    this.Response = class DrainingResponse extends ServerResponse {
      // Every head goes out through writeHead (Node's implicit head calls it too).
      override writeHead(statusCode: number, reason?: string | Head, headers?: Head): this {
        if (drain.closing) this.setHeader('connection', 'close');
        return super.writeHead(statusCode, reason as string | undefined, headers);
      }
    };
  }

  attach(server: Server): void {
    this.server = server;
  }

  /** Stops accepting connections; resolves once every connection has closed. */
  close(): Promise<void> {
    const server = this.server!;
    this.closing = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // A stream whose head went out saying keep-alive leaves its connection idle once it ends: close it then.
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    void closed.finally(() => clearInterval(sweep));
    return closed;
  }

  /** Cuts every connection still open (the drain's time is up). */
  cut(): void {
    this.server?.closeAllConnections();
  }
}
