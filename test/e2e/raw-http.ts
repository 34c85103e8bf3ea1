// A bare HTTP/1.1 client over sockets opened ahead of time, for floods: thousands of requests written at
// the same moment on warm keep-alive connections, so what is measured is the gateway, not the kernel's
// accept queue (Node listens with a backlog of 511) or a client agent's pooling.
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** From writing the request to reading the whole answer. */
  ms: number;
}

export class RawConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting:
    | { resolve: (answer: RawAnswer) => void; reject: (error: Error) => void; started: number }
    | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
      this.parse();
    });
    const fail = (error: Error): void => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(error);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed before the answer')));
  }

  /** Opens `count` connections, `batch` at a time. */
  static async open(port: number, count: number, batch = 200): Promise<RawConnection[]> {
    const all: RawConnection[] = [];
    for (let i = 0; i < count; i += batch) {
      const sockets = await Promise.all(
        Array.from(
          { length: Math.min(batch, count - i) },
          () =>
            new Promise<net.Socket>((resolve, reject) => {
              const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
              socket.once('error', reject);
            }),
        ),
      );
      for (const socket of sockets) all.push(new RawConnection(socket));
    }
    return all;
  }

  /** Sends one request (one at a time per connection) and resolves with its whole answer. */
  send(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body = ''): Promise<RawAnswer> {
    if (this.waiting) throw new Error('one request at a time per connection');
    const head = [
      `${method} ${path} HTTP/1.1`,
      'host: 127.0.0.1',
      `content-length: ${Buffer.byteLength(body)}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject, started: performance.now() };
      this.socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private parse(): void {
    const end = this.buffered.indexOf('\r\n\r\n');
    if (end === -1 || !this.waiting) return;
    const lines = this.buffered.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffered.length < end + 4 + length) return;
    const text = this.buffered.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffered = this.buffered.subarray(end + 4 + length);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting.resolve({
      status: Number(lines[0]!.split(' ')[1]),
      headers,
      text,
      ms: performance.now() - waiting.started,
    });
  }
}
