// The start-up baseline of bench/scale.ts, in a small process of its own: a plain Node process (not the bench
// with tsx loaded) forks faster, so the gateway is held to the quicker baseline. Spawns N synthetic servers
// at once (each leading its own process group, as the gateway spawns them), sends each server/discover,
// and prints the ms from the first spawn to the last answer.
//   node bench/spawn-direct.mjs <count> <tools each>     (the environment is the one each child gets)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const [count, tools] = process.argv.slice(2).map(Number);
const server = path.join(fileURLToPath(new URL('../', import.meta.url)), 'test/fixtures/synthetic-server.mjs');
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const discover = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } })}\n`;
const began = performance.now();
const children = Array.from({ length: count }, (_, i) =>
  spawn(process.execPath, [server], {
    env: { ...process.env, SERVER_ID: `s${i}`, TOOL_COUNT: String(tools) },
    stdio: ['pipe', 'pipe', 'ignore'],
    detached: true,
  }),
);
await Promise.all(
  children.map(
    (child) =>
      new Promise((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', () => reject(new Error('a child exited before answering')));
        createInterface({ input: child.stdout }).once('line', resolve);
        child.stdin.write(discover);
      }),
  ),
);
process.stdout.write(`${(performance.now() - began).toFixed(1)}\n`);
for (const child of children) child.stdin.end();
