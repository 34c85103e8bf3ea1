// A redis-server of a test's own, on a free loopback port, to stop and start under a running cache.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { after } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { onFreePort, PortTaken, stablePort } from '../ports.js';

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

/**
 * A redis-server of the test's own on `port`, once it accepts connections. Throws PortTaken when the port is
 * in use (it exits saying so), so `onFreePort(startRedis)` simply tries another: never someone else's server.
 */
export function startRedis(port: number): Promise<ChildProcess> {
  return startRedisServer(
    port,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    /Ready to accept connections/,
  );
}

/**
 * redis-server with `args` (which make it listen on `port`), once its log says `ready` and the port answers;
 * PortTaken when it exits because the port is in use.
 */
export async function startRedisServer(port: number, args: string[], ready: RegExp): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let said = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (said = (said + chunk).slice(-4000)));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      if (/Address already in use/.test(said)) throw new PortTaken(port, 'redis-server could not bind it');
      throw new Error(`redis-server on port ${port} exited with ${child.exitCode}:\n${said}`);
    }
    if (ready.test(said) && (await reachable(port))) return child;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not start:\n${said}`);
}

/**
 * A redis-server of the test's own on a free port (another one if the first is taken meanwhile), below the
 * ephemeral range: a test that stops it can start it again on that port (stablePort in test/ports.ts).
 */
export async function ownRedis(): Promise<{ port: number; child: ChildProcess }> {
  return onFreePort(async (port) => ({ port, child: await startRedis(port) }), 5, stablePort);
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
