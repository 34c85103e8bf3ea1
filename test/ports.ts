// Loopback ports for tests that run beside other test files (the suite runs its files concurrently).
//
// A server of the test's own listens on port 0 and reads the port it got: nothing to choose. These helpers are
// for the rest: a program that must be told its port before it starts (redis-server, HAProxy, a gateway whose
// config names its own URL), and an address where nothing answers. A port the kernel has just handed out and
// taken back can be handed to another process before ours binds it, so a start that finds its port taken is
// tried again on another one instead of failing the test (or, worse, talking to someone else's server).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A loopback port the kernel has just handed out and nobody listens on now: for "nothing answers there". */
export function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Where the kernel's ephemeral range starts (the ports it hands out for port 0 and for the local end of every
 * outgoing connection): Linux's own setting, 32768 when it cannot be read.
 */
function ephemeralFrom(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}
const STABLE_FROM = 10_000;
const STABLE_TO = ephemeralFrom(); // exclusive

/**
 * A loopback port below the ephemeral range that nobody listens on now: for a server a test stops and starts
 * again on the same port. A port from unusedPort() can meanwhile become the local end of any outgoing
 * connection on the machine (other test files make many), and the restart then fails; one below the range is
 * only ever taken by a program asking for it by number.
 */
export async function stablePort(): Promise<number> {
  for (;;) {
    const port = STABLE_FROM + Math.floor(Math.random() * (STABLE_TO - STABLE_FROM));
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** Thrown (or matched in a thrown error's message) when a program could not bind the port it was given. */
export class PortTaken extends Error {
  constructor(port: number, detail = '') {
    super(`port ${port} is in use${detail ? `: ${detail}` : ''}`);
  }
}

const TAKEN = /is in use|EADDRINUSE|Address already in use|cannot bind socket/i;

/**
 * `start(port)` on a port nobody listened on a moment ago (from `pick`: unusedPort, or stablePort for a server
 * restarted on its port); when the port turns out taken in between (start throws a PortTaken, or an error
 * saying EADDRINUSE / "in use" / "cannot bind"), again on another, up to `attempts` times. Any other error is
 * thrown at once.
 */
export async function onFreePort<T>(
  start: (port: number) => Promise<T>,
  attempts = 5,
  pick: () => Promise<number> = unusedPort,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await pick();
    try {
      return await start(port);
    } catch (error) {
      const taken = error instanceof PortTaken || TAKEN.test(String((error as Error)?.message ?? error));
      if (!taken || attempt >= attempts) throw error;
    }
  }
}
