// Real servers run sandboxed (issue 47): server-everything, server-memory (its file under write:) and
// server-filesystem (limited to one folder) answer their own tools through /mcp; a per-caller server gives
// each caller's child its own private tmp and a /proc without the other's; a host without bubblewrap
// refuses a sandboxed server at start, and refuses a reload that asks for one while the running servers
// keep serving.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { sandboxSkip } from '../sandbox-host.js';
import { gatewayCli } from '../built.js';
import { tempDir } from '../temp.js';
import { eventually, everything, request, ROOT, send, textOf, until } from './harness.js';

const skip = await sandboxSkip(ROOT);
const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' };
const FIXTURE = path.join(ROOT, 'test/fixtures/hostile-server.mjs');
let dir: string;
let gateway: RunningGateway;

before(async () => {
  if (skip) return;
  dir = tempDir('sandbox-servers-');
  chmodSync(dir, 0o755);
  mkdirSync(path.join(dir, 'files'));
  writeFileSync(path.join(dir, 'files/hello.txt'), 'hello from the host');
  // A root gateway's sandboxed children write as nobody.
  if (process.getuid?.() === 0) for (const folder of [dir, path.join(dir, 'files')]) chownSync(folder, 65534, 65534);
  const raw = {
    listen: { port: 0 },
    sandbox: { memoryBytes: 512 * 1024 * 1024, processes: 128, read: [path.join(ROOT, 'node_modules')] },
    servers: {
      everything: { ...everything, sandbox: true },
      memory: {
        command: process.execPath,
        args: ['node_modules/@modelcontextprotocol/server-memory/dist/index.js'],
        cwd: ROOT,
        env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') },
        sandbox: { write: [dir] },
      },
      files: {
        command: process.execPath,
        args: ['node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', path.join(dir, 'files')],
        cwd: ROOT,
        sandbox: { write: [path.join(dir, 'files')] },
      },
      each: {
        command: process.execPath,
        args: [FIXTURE],
        cwd: ROOT,
        era: 'modern',
        perCaller: true,
      },
    },
    auth: { apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })) },
    audit: { destination: path.join(dir, 'audit.log') },
  };
  gateway = await startGateway(parseConfig(raw, 'test', ROOT), silentLog);
  assert.ok(await until(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 60_000), 'ready');
});

after(async () => {
  await gateway?.close();
});

async function call(url: string, name: string, args: Record<string, unknown>, key = KEYS.alice) {
  const answer = await send(url, request('tools/call', { name, arguments: args }), { authorization: `Bearer ${key}` });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.notEqual(answer.body.result?.isError, true, JSON.stringify(answer.body));
  return textOf(answer);
}

test('server-everything runs sandboxed and its tools work through /mcp', { skip }, async () => {
  assert.equal(await call(`${gateway.url}/mcp`, 'everything__echo', { message: 'boxed' }), 'Echo: boxed');
});

test('server-memory keeps its graph in its write: folder', { skip }, async () => {
  const entity = { name: 'sandbox', entityType: 'feature', observations: ['runs boxed'] };
  await call(`${gateway.url}/mcp`, 'memory__create_entities', { entities: [entity] });
  assert.match(await call(`${gateway.url}/mcp`, 'memory__read_graph', {}), /runs boxed/);
  assert.ok(existsSync(path.join(dir, 'memory.jsonl')), 'the file is on the host, in the write: folder');
  assert.match(readFileSync(path.join(dir, 'memory.jsonl'), 'utf8'), /runs boxed/);
});

test('server-filesystem limited to one folder reads, writes and lists it through /mcp', { skip }, async () => {
  const mcp = `${gateway.url}/mcp`;
  const file = path.join(dir, 'files/hello.txt');
  assert.equal(await call(mcp, 'files__read_text_file', { path: file }), 'hello from the host');
  await call(mcp, 'files__write_file', { path: path.join(dir, 'files/new.txt'), content: 'written boxed' });
  assert.equal(readFileSync(path.join(dir, 'files/new.txt'), 'utf8'), 'written boxed');
  const listed = await call(mcp, 'files__list_directory', { path: path.join(dir, 'files') });
  assert.match(listed, /hello\.txt/);
});

test("each caller's child has its own tmp and data folder and cannot see the other's processes", { skip }, async () => {
  const url = `${gateway.url}/servers/each/mcp`;
  const attack = (file: string) => ({ write: { mine: file }, read: { theirs: '/tmp/data/bob.txt' }, environs: true });
  const alice = JSON.parse(await call(url, 'attack', attack('/tmp/data/alice.txt'), KEYS.alice));
  const bob = JSON.parse(await call(url, 'attack', attack('/tmp/data/bob.txt'), KEYS.bob));
  assert.equal(alice.write.mine.ok, true);
  assert.equal(bob.write.mine.ok, true);
  assert.equal(alice.read.theirs.ok, false, "alice's child does not see bob's data folder");
  const again = JSON.parse(await call(url, 'attack', { read: { theirs: '/tmp/data/bob.txt' } }, KEYS.alice));
  assert.equal(again.read.theirs.ok, false, 'not even once bob wrote it');
  assert.equal(alice.env.MCP_SANDBOX_DATA, '/tmp/data');
  assert.ok(Object.keys(alice.environs).length <= 3, `alice's /proc: ${Object.keys(alice.environs)}`);
});

test('a host without bubblewrap refuses a sandboxed server at start, naming what is missing', () => {
  // Not skipped without bwrap: this is what such a host shows. PATH is an empty folder, so no bwrap.
  const empty = tempDir('sandbox-no-path-');
  const config = path.join(empty, 'gateway.config.yaml');
  writeFileSync(config, 'listen: { port: 0 }\nservers:\n  boxed: { command: node, sandbox: { processes: 32 } }\n');
  const result = spawnSync(process.execPath, [...gatewayCli(), '--config', config], {
    cwd: empty,
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: empty },
  });
  assert.equal(result.status, 1, result.stderr);
  assert.match(
    result.stderr,
    new RegExp(
      String.raw`servers\.boxed\.sandbox: this host cannot isolate a child ` +
        String.raw`\(bwrap \(bubblewrap\) is not on PATH\); install bubblewrap`,
    ),
  );
  assert.match(result.stderr, /or set servers\.boxed\.sandbox: false to run it bare/);
});

test(
  'a reload asking for a sandbox the host cannot give is refused whole; ' + 'the running servers keep serving',
  async () => {
    const empty = tempDir('sandbox-reload-');
    const file = path.join(empty, 'gateway.config.yaml');
    const solo = (sandbox: string) =>
      `listen: { port: 0 }\nservers:\n  solo: { command: ${JSON.stringify(process.execPath)}, args: ` +
      `${JSON.stringify([path.join(ROOT, 'test/fixtures/hostile-server.mjs')])}, era: modern${sandbox} }\n`;
    writeFileSync(file, solo(''));
    const child = spawn(process.execPath, [...gatewayCli(), '--config', file], {
      cwd: empty,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: empty }, // no bwrap on it
    });
    let log = '';
    child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    try {
      await eventually(() => /"endpoint":"http:\/\/127\.0\.0\.1:\d+\/servers\/solo\/mcp"/.test(log), 60_000);
      const endpoint = /"endpoint":"(http:\/\/127\.0\.0\.1:\d+\/servers\/solo\/mcp)"/.exec(log)![1]!;
      const argv = async () => textOf(await send(endpoint, request('tools/call', { name: 'argv', arguments: {} })));
      assert.equal(await argv(), '[]');
      writeFileSync(file, solo(', sandbox: true'));
      child.kill('SIGHUP');
      await eventually(() => /servers\.solo\.sandbox: this host cannot isolate.*reload refused/.test(log), 30_000);
      assert.equal(await argv(), '[]', 'the running server still serves');
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  },
);
