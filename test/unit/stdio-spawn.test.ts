// Spawning a stdio child through execa (issue 34, item 4): a spawn that cannot even start (a cwd that is a
// file, a command that is missing or not runnable) is reported as the child's exit, naming the setting, and
// never thrown at the gateway; and a gateway that dies without its shutdown path — killed by a signal it does
// not handle — takes its children's process groups with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { StdioProcess, type ExitInfo } from '../../bridge/stdio/stdio-process.js';
import { silentLog } from '../../infra/log.js';
import { tempDir } from '../temp.js';
import { alive } from '../processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = tempDir('mcp-gw-spawn-');

const spec = {
  command: process.execPath,
  args: ['-e', ''],
  env: { PATH: process.env.PATH ?? '' } as Record<string, string>,
  cwd: ROOT,
  maxLineBytes: 1024,
};

/** Starts a child and waits for its exit, counting the exit events: a failed spawn must report exactly one. */
async function run(
  overrides: Partial<typeof spec>,
): Promise<{ info: ExitInfo; pid: number | undefined; exits: number }> {
  let exits = 0;
  const child = new StdioProcess({ ...spec, ...overrides }, silentLog, {
    message() {},
    oversized() {},
    exit: () => void exits++,
  });
  const info = await child.exited;
  await new Promise((resolve) => setTimeout(resolve, 50)); // a second report would come on a later turn
  return { info, pid: child.pid, exits };
}

test('a cwd that is a file is reported as the exit, naming cwd; the constructor does not throw', async () => {
  const file = path.join(dir, 'not-a-folder');
  writeFileSync(file, '');
  const { info, pid, exits } = await run({ cwd: file });
  assert.equal(pid, undefined);
  assert.deepEqual(info, {
    code: null,
    signal: null,
    spawnError: `working folder is not a folder: ${file} (check cwd)`,
  });
  assert.equal(exits, 1);
});

test('a missing command, a missing cwd and a file that is not runnable each name what to check', async () => {
  assert.equal(
    (await run({ command: 'definitely-not-a-command-mcp' })).info.spawnError,
    'command not found: definitely-not-a-command-mcp (check command)',
  );
  const gone = path.join(dir, 'gone');
  assert.equal((await run({ cwd: gone })).info.spawnError, `working folder not found: ${gone} (check cwd)`);
  const script = path.join(dir, 'not-executable.sh');
  writeFileSync(script, '#!/bin/sh\n');
  chmodSync(script, 0o644);
  assert.equal(
    (await run({ command: script })).info.spawnError,
    `command not runnable (permission denied): ${script} (check command)`,
  );
});

test(
  'a spawn refused for a value of its environment names the variable, ' + 'never the value (issue 45 item 7)',
  async () => {
    const secret = 'ghp_pasted-secret-0123456789';
    const { info, pid } = await run({ env: { PATH: process.env.PATH ?? '', GITHUB_TOKEN: `${secret}\u0000tail` } });
    assert.equal(pid, undefined);
    const said = info.spawnError ?? '';
    assert.match(said, /GITHUB_TOKEN/, said);
    assert.match(said, /null bytes/, said);
    assert.equal(said.includes(secret), false, said);
    assert.equal(said.includes('ghp_'), false, said);
    assert.equal(said.includes('tail'), false, said);
  },
);

test('the command is found on the child’s PATH, and stdout carries only the messages', async () => {
  const messages: unknown[] = [];
  const child = new StdioProcess(
    {
      ...spec,
      command: 'node',
      args: ['-e', 'console.log(JSON.stringify({ jsonrpc: "2.0", method: "hello" })); console.error("to the log")'],
    },
    silentLog,
    { message: (message) => messages.push(message), oversized() {}, exit() {} },
  );
  const info = await child.exited;
  assert.deepEqual(info, { code: 0, signal: null, spawnError: undefined });
  assert.deepEqual(messages, [{ jsonrpc: '2.0', method: 'hello' }]);
  assert.equal(child.recentStderr(), 'to the log');
});

test('a gateway killed by a signal it does not handle takes its child and grandchild with it', {
  timeout: 60_000,
}, async () => {
  // The "gateway": a process holding one StdioProcess whose child starts a grandchild, then reports both pids.
  const childScript = `
    const { spawn } = require('node:child_process');
    const grand = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    console.log(JSON.stringify({ jsonrpc: '2.0', method: 'pids', params: { child: process.pid, grand: grand.pid } }));
    setInterval(() => {}, 1000);`;
  const gatewayScript = `
    import { StdioProcess } from ${JSON.stringify(path.join(ROOT, 'bridge/stdio/stdio-process.ts'))};
    import { silentLog } from ${JSON.stringify(path.join(ROOT, 'infra/log.ts'))};
    new StdioProcess({ command: process.execPath, args: ['-e', ${JSON.stringify(childScript)}], env: {},
      cwd: ${JSON.stringify(ROOT)}, maxLineBytes: 4096 }, silentLog, {
      message: (m) => process.stdout.write(JSON.stringify(m.params) + '\\n'), oversized() {}, exit() {},
    });
    setInterval(() => {}, 1000);`;
  const file = path.join(dir, 'dying-gateway.mts');
  writeFileSync(file, gatewayScript);
  const gateway = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const pids = await new Promise<{ child: number; grand: number }>((resolve, reject) => {
    let text = '';
    gateway.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(JSON.parse(text.split('\n')[0]!));
    });
    gateway.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before its child reported`)));
  });
  assert.ok(alive(pids.child) && alive(pids.grand), 'both run while the gateway does');
  const exited = new Promise((resolve) => gateway.once('exit', (_code, signal) => resolve(signal)));
  gateway.kill('SIGHUP');
  assert.equal(await exited, 'SIGHUP', 'the gateway died of the signal');
  // Killed (SIGKILL, by the exit hook) before the gateway died; give the kernel a moment to reap them.
  let gone = false;
  for (let i = 0; i < 100 && !gone; i++) {
    gone = !alive(pids.child) && !alive(pids.grand);
    if (!gone) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (const pid of [pids.child, pids.grand]) if (alive(pid)) process.kill(pid, 'SIGKILL');
  assert.ok(gone, 'the child or its grandchild outlived the gateway');
});
