// A TCP proxy in front of the Redis at 127.0.0.1:6379 that tells connections apart by the name they give
// (CLIENT SETNAME, the first thing ioredis sends) and can hold one back or refuse one of its commands:
// how a test makes one of a process's two connections ready later than the other, or fail once.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface ProxyRules {
  /** The connection name the rules apply to (exactly: `x` does not match `x-sub`). */
  name: string;
  /** Hold what that connection sends until `release()`. */
  hold?: boolean;
  /** Answer the first command containing this text (lower case) with an error instead of passing it on. */
  refuseOnce?: string;
  /** Pass on each command containing `text` (lower case) only after `ms`: a Redis far away (order is kept). */
  slow?: { text: string; ms: number };
}

export interface RedisProxy {
  url: string;
  release(): void;
  /** How many commands were refused. */
  readonly refused: number;
  /** Resolves once some connection was sent a reply containing `text` (lower case). */
  replied(text: string): Promise<void>;
  close(): Promise<void>;
}

export async function redisProxy(rules: ProxyRules): Promise<RedisProxy> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let refused = 0;
  const sockets = new Set<Socket>();
  const waiting: { text: string; resolve: () => void }[] = [];
  const server: Server = createServer((downstream) => {
    const upstream = connect(6379, '127.0.0.1');
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => (downstream.destroy(), upstream.destroy()));
    }
    upstream.on('data', (chunk: Buffer) => {
      downstream.write(chunk);
      const text = chunk.toString('latin1').toLowerCase();
      for (const wait of waiting.splice(0)) text.includes(wait.text) ? wait.resolve() : waiting.push(wait);
    });
    // Every chunk waits for the one before it, so a delayed command is never overtaken.
    let sent = Promise.resolve();
    const slowly = (chunk: Buffer, slow: { text: string; ms: number }): void => {
      const delay = chunk.toString('latin1').toLowerCase().includes(slow.text) ? slow.ms : 0;
      sent = sent
        .then(() => new Promise((resolve) => setTimeout(resolve, delay)))
        .then(() => void upstream.write(chunk));
    };
    // Undecided until the name arrived; chunks wait in order.
    let matched: boolean | undefined;
    let early = Buffer.alloc(0);
    const pass = (chunk: Buffer): void => {
      if (
        matched &&
        rules.refuseOnce &&
        refused === 0 &&
        chunk.toString('latin1').toLowerCase().includes(rules.refuseOnce)
      ) {
        refused++;
        downstream.write('-ERR refused by the test proxy\r\n');
        return;
      }
      if (matched && rules.hold) void released.then(() => upstream.write(chunk));
      else if (matched && rules.slow) slowly(chunk, rules.slow);
      else upstream.write(chunk);
    };
    downstream.on('data', (chunk: Buffer) => {
      if (matched !== undefined) return pass(chunk);
      early = Buffer.concat([early, chunk]);
      const text = early.toString('latin1');
      const at = text.indexOf(`\r\n${rules.name}`);
      if (at < 0 || text.length < at + rules.name.length + 4) return; // not yet sure which name it is
      matched = text.startsWith('\r\n', at + 2 + rules.name.length);
      pass(early);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    release,
    get refused() {
      return refused;
    },
    replied: (text) => new Promise((resolve) => waiting.push({ text, resolve })),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
