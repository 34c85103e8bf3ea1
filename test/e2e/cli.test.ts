// The command line as a user runs it: a real process, its stderr log, its exit codes.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { eventually, post, request, ROOT, send } from './harness.js';
import { tempDir } from '../temp.js';
import { gatewayCli } from '../built.js';
import { compiledFixture } from '../compiled-fixtures.js';

// The built program when dist/ is up to date (test/built.ts), as a user runs it; the sources otherwise.
const CLI = gatewayCli();
const MODERN = compiledFixture('modern-server');
const run = (args: string[]) =>
  spawnSync(process.execPath, [...CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

test('--help documents both forms', () => {
  const result = run(['--help']);
  assert.equal(result.status, 0);
  assert.match(result.stdout, /mcp-gateway \[--config FILE\] \[--host HOST\] \[--port PORT\]/);
  assert.match(result.stdout, /mcp-gateway --stdio "<command line>" \[--name NAME\]/);
});

test('an unknown flag exits 2 and points to --help', () => {
  const result = run(['--frobnicate']);
  assert.equal(result.status, 2);
  assert.match(result.stderr, /--frobnicate/);
  assert.match(result.stderr, /--help/);
});

test('an invalid config exits 2 listing every problem with its key path', () => {
  const dir = tempDir('mcp-gw-cli-');
  const file = path.join(dir, 'bad.yaml');
  writeFileSync(
    file,
    'listen: { port: "eighty" }\nservers:\n  "bad name": { command: node }\n  ok: { command: node, timeoutMS: 5 }\n',
  );
  const result = run(['--config', file]);
  assert.equal(result.status, 2);
  assert.match(result.stderr, /listen\.port/);
  assert.match(result.stderr, /servers\.bad name.*A-Z a-z 0-9 _ -/);
  assert.match(result.stderr, /servers\.ok: unknown key 'timeoutMS'/);
});

test('a missing config file exits 2 naming it', () => {
  const result = run(['--config', '/nonexistent/gateway.yaml']);
  assert.equal(result.status, 2);
  assert.equal(result.stderr.split('\n')[0], 'mcp-gateway: the config file /nonexistent/gateway.yaml does not exist');
});

test('--name must be a valid server name', () => {
  const result = run(['--stdio', 'node x.js', '--name', 'no spaces']);
  assert.equal(result.status, 2);
  assert.match(result.stderr, /--name must be 1-32 characters/);
});

test('--stdio bridges one server, logs its endpoint, and exits 0 on SIGTERM', async () => {
  const child = spawn(
    process.execPath,
    [...CLI, '--stdio', `${process.execPath} ${MODERN}`, '--name', 'solo', '--port', '0'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const log = stderrOf(child);
  const endpoint = await soloEndpoint(log);
  const answer = await post(endpoint, request('tools/call', { name: 'echo', arguments: { text: 'via cli' } }));
  assert.equal(answer.body.result.content[0].text, 'via cli');
  for (const line of log.text.trim().split('\n')) JSON.parse(line); // every log line is JSON
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('--host beyond loopback without an auth: section exits 2 naming the fix', () => {
  const result = run(['--stdio', 'node x.js', '--host', '0.0.0.0']);
  assert.equal(result.status, 2);
  assert.match(
    result.stderr,
    /--host 0\.0\.0\.0: .*no auth: section; add auth\.apiKeys or auth\.jwt .*auth\.anonymous: true/,
  );
});

test('SIGHUP, or saving the file, reloads the config; a config that does not load keeps the running one', async () => {
  const dir = tempDir('mcp-gw-hup-');
  const file = path.join(dir, 'gateway.yaml');
  const config = (key: string) =>
    `listen: { port: 0 }\nauth:\n  apiKeys: [{ key: ${key}, principal: ann }]\nservers:\n  solo: { command: ` +
    `${JSON.stringify(process.execPath)}, args: [${JSON.stringify(MODERN)}], cwd: ` +
    `${JSON.stringify(ROOT)} }\n`;
  writeFileSync(file, config('first-key-0123456789'));
  const child = spawn(process.execPath, [...CLI, '--config', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = stderrOf(child);
  try {
    const endpoint = await soloEndpoint(log);
    const call = request('tools/call', { name: 'echo', arguments: { text: 'hup' } });
    const as = (key: string) => send(endpoint, call, { authorization: `Bearer ${key}` });
    assert.equal((await as('first-key-0123456789')).status, 200);

    writeFileSync(file, config('second-key-0123456789'));
    child.kill('SIGHUP');
    await eventually(async () => (await as('second-key-0123456789')).status === 200, 10_000);
    assert.equal((await as('first-key-0123456789')).status, 401);

    writeFileSync(
      file,
      `${config('third-key-0123456789')}policies: [{ name: broken, principals: { ids: [ann] }, when: [{ tool: x, ` +
        `expr: "args.n <=" }] }]\n`,
    );
    child.kill('SIGHUP');
    await eventually(() => /policies\[0\] \(broken\)\.when\[0\]\.expr.*reload refused/.test(log.text), 10_000);
    assert.equal((await as('second-key-0123456789')).status, 200, 'the running config still serves');
    assert.equal((await as('third-key-0123456789')).status, 401);
    // Saving the file is enough: the gateway watches it.
    writeFileSync(file, config('fourth-key-0123456789'));
    await eventually(async () => (await as('fourth-key-0123456789')).status === 200, 10_000);
    assert.doesNotMatch(log.text, /second-key|third-key|first-key|fourth-key/, 'keys never reach the log');
  } finally {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});

test('a Kubernetes ConfigMap update (the ..data link swapped to a new folder) is seen and reloaded', async () => {
  // A ConfigMap volume: gateway.yaml -> ..data/gateway.yaml, ..data -> ..<version>; an update writes a new
  // version folder and renames a new link over ..data, so gateway.yaml itself never changes.
  const dir = tempDir('mcp-gw-configmap-');
  const config = (key: string) =>
    `listen: { port: 0 }\nauth:\n  apiKeys: [{ key: ${key}, principal: ann }]\nservers:\n  solo: { command: ` +
    `${JSON.stringify(process.execPath)}, args: [${JSON.stringify(MODERN)}], cwd: ` +
    `${JSON.stringify(ROOT)} }\n`;
  const version = (name: string, key: string): void => {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'gateway.yaml'), config(key));
  };
  version('..v1', 'first-key-0123456789');
  symlinkSync('..v1', path.join(dir, '..data'));
  symlinkSync('..data/gateway.yaml', path.join(dir, 'gateway.yaml'));
  const child = spawn(process.execPath, [...CLI, '--config', path.join(dir, 'gateway.yaml')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = stderrOf(child);
  try {
    const endpoint = await soloEndpoint(log);
    const call = request('tools/call', { name: 'echo', arguments: { text: 'configmap' } });
    const as = (key: string) => send(endpoint, call, { authorization: `Bearer ${key}` });
    assert.equal((await as('first-key-0123456789')).status, 200);
    version('..v2', 'second-key-0123456789');
    symlinkSync('..v2', path.join(dir, '..data_tmp'));
    renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    await eventually(async () => (await as('second-key-0123456789')).status === 200, 10_000);
    assert.equal((await as('first-key-0123456789')).status, 401);
  } finally {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A child's stderr as it grows. */
function stderrOf(child: ChildProcessWithoutNullStreams | ReturnType<typeof spawn>): {
  text: string;
  child: typeof child;
} {
  const log = { text: '', child };
  child.stderr!.on('data', (chunk: Buffer) => (log.text += chunk.toString('utf8')));
  return log;
}

/**
 * The URL of the server named solo, once the gateway logs it (within 60 s: a deadline for a loaded machine, not an
 * expectation).
 */
function soloEndpoint(log: ReturnType<typeof stderrOf>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no endpoint logged:\n${log.text}`)), 60_000);
    const look = (): void => {
      const match = /"endpoint":"(http:\/\/127\.0\.0\.1:\d+\/servers\/solo\/mcp)"/.exec(log.text);
      if (!match) return;
      clearTimeout(timer);
      log.child.stderr!.off('data', look);
      resolve(match[1]!);
    };
    log.child.stderr!.on('data', look);
    look();
  });
}
