// A start that cannot listen (its port taken) ends the process with exit code 1, as docs/deployment.md says,
// with and without Redis: a supervisor restarts it, instead of a process that logged "could not start" and
// stays up holding its Redis connections.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT } from './harness.js';
import { dropRedisKeys, sharedRedis } from '../services.js';
import { tempDir } from '../temp.js';
import { scaled } from '../timing.js';
import { gatewayCli } from '../built.js';

const redis = await sharedRedis('the port-busy start with Redis');
const keyPrefix = `mcpgw-start-failure-${process.pid}:`;
const HUNG_MS = scaled(60_000);
let busy: Server;
let busyPort: number;

before(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});
after(async () => {
  await new Promise((resolve) => busy.close(resolve));
  if (redis.present) await dropRedisKeys(keyPrefix);
});

/**
 * Runs the CLI on `config` and resolves with its exit code and stderr; a process still up after 60 s (times
 * TEST_TIME_FACTOR) fails. The bound is for a hang: on a loaded machine the CLI's start alone (its TypeScript
 * compiled by the test loader) took longer than 30 s once, before it had logged a line.
 */
function runUntilExit(config: string): Promise<{ code: number | null; stderr: string }> {
  const file = path.join(tempDir('mcp-gw-start-failure-'), 'gateway.yaml');
  writeFileSync(file, config);
  const child = spawn(process.execPath, [...gatewayCli(), '--config', file], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const hung = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the gateway was still running ${HUNG_MS} ms after a failed start; its log:\n${stderr}`));
    }, HUNG_MS);
    child.once('exit', (code) => {
      clearTimeout(hung);
      resolve({ code, stderr });
    });
  });
}

const IDLE_CHILD = `{ command: ${JSON.stringify(process.execPath)}, args: ["-e", "setInterval(() => {}, 1000)"] }`;
const SERVER = `servers:\n  echo: ${IDLE_CHILD}\n`;

test('a start on a port in use exits 1 naming the port', async () => {
  const { code, stderr } = await runUntilExit(`listen: { port: ${busyPort} }\n${SERVER}`);
  assert.equal(code, 1);
  assert.match(stderr, new RegExp(`port ${busyPort} on 127\\.0\\.0\\.1 is in use`));
});

test('with cache.store redis, a start on a port in use exits 1 too', { skip: redis.skip }, async () => {
  redis.check();
  const cache = `cache: { store: redis, url: "redis://127.0.0.1:6379", keyPrefix: "${keyPrefix}" }\n`;
  const { code, stderr } = await runUntilExit(`listen: { port: ${busyPort} }\n${cache}${SERVER}`);
  assert.equal(code, 1);
  assert.match(stderr, /could not start/);
});
