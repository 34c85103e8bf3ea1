// The command line as a user runs it: a real process, its stderr log, its exit codes.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { post, request, ROOT } from './harness.js';

const CLI = ['--import', 'tsx', 'src/cli.ts'];
const run = (args: string[]) => spawnSync(process.execPath, [...CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });

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
  const dir = mkdtempSync(path.join(tmpdir(), 'mcp-gw-cli-'));
  const file = path.join(dir, 'bad.yaml');
  writeFileSync(file, 'listen: { port: "eighty" }\nservers:\n  "bad name": { command: node }\n  ok: { command: node, timeoutMS: 5 }\n');
  const result = run(['--config', file]);
  assert.equal(result.status, 2);
  assert.match(result.stderr, /listen\.port/);
  assert.match(result.stderr, /servers\.bad name.*A-Z a-z 0-9 _ -/);
  assert.match(result.stderr, /servers\.ok: unknown key 'timeoutMS'/);
});

test('a missing config file exits 2 naming it', () => {
  const result = run(['--config', '/nonexistent/gateway.yaml']);
  assert.equal(result.status, 2);
  assert.match(result.stderr, /\/nonexistent\/gateway\.yaml.*ENOENT.*--config/s);
});

test('--name must be a valid server name', () => {
  const result = run(['--stdio', 'node x.js', '--name', 'no spaces']);
  assert.equal(result.status, 2);
  assert.match(result.stderr, /--name must be 1-32 characters/);
});

test('--stdio bridges one server, logs its endpoint, and exits 0 on SIGTERM', async () => {
  const child = spawn(
    process.execPath,
    [...CLI, '--stdio', `${process.execPath} --import tsx test/fixtures/modern-server.ts`, '--name', 'solo', '--port', '0'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const endpoint = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no endpoint logged:\n${stderr}`)), 15_000);
    child.stderr.on('data', () => {
      const match = /"endpoint":"(http:\/\/127\.0\.0\.1:\d+\/servers\/solo\/mcp)"/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });
  const answer = await post(endpoint, request('tools/call', { name: 'echo', arguments: { text: 'via cli' } }));
  assert.equal(answer.body.result.content[0].text, 'via cli');
  for (const line of stderr.trim().split('\n')) JSON.parse(line); // every log line is JSON
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});
