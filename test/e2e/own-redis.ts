// A redis-server of a test's own, on a free loopback port, to stop and start under a running cache.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { after } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

export function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    // Generous: a refused connection answers at once, and on a loaded machine a test process that has just
    // started can stall past a short timer before it sees the connection that did open.
    socket.setTimeout(5_000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.connect(port, '127.0.0.1');
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (await reachable(port)) return child;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not start`);
}

/** kill -9 (after SIGCONT, in case a test froze it), and wait until it is gone. */
export async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGCONT');
  child.kill('SIGKILL');
  await exited;
}

/**
 * For a describe block: a connection to the shared Redis at 127.0.0.1:6379 and a key prefix of the block's
 * own, whose keys are deleted (and the connection closed) when the block ends.
 */
export function scratchRedis(): { keyPrefix: string; redis: Redis } {
  const keyPrefix = `mcp-gateway-test:${randomUUID()}:`;
  const redis = new Redis('redis://127.0.0.1:6379');
  after(async () => {
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  return { keyPrefix, redis };
}
