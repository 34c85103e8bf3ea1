// bridge/sandbox/exit-watch.ts without bubblewrap: status documents written to a server's FIFO as bwrap's
// --json-status-fd writes them. An end by SIGSYS (128 + 31) or SIGXCPU (128 + 24) is counted and logged,
// a line per child that ended so; other ends and other documents are not refusals; closing removes it.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { watchExits } from '../../bridge/sandbox/exit-watch.js';
import { sandboxRefusals } from '../../bridge/sandbox/refusals.js';
import { until } from '../e2e/harness.js';
import { recordingLog } from '../recording-log.js';

test('each end by SIGSYS or SIGXCPU is counted and logged; other ends are not refusals', async () => {
  const recorded = recordingLog();
  const server = `exit-watch-${process.pid}`;
  const watch = watchExits(server, recorded.log);
  assert.ok(watch, 'mkfifo is on PATH here');
  const statuses = [{ 'child-pid': 7 }, { 'exit-code': 159 }, { 'exit-code': 159 }, { 'exit-code': 152 }];
  const others = [{ 'exit-code': 0 }, { 'exit-code': 1 }, { 'exit-code': 137 }, 'not json'];
  for (const status of [...statuses, ...others])
    writeFileSync(watch.fifo, `${typeof status === 'string' ? status : JSON.stringify(status)}\n`);
  const counts = () => Object.fromEntries(sandboxRefusals.get(server) ?? []);
  assert.ok(await until(() => counts().syscall === 2 && counts().cpu === 1, 5000), JSON.stringify(counts()));
  assert.deepEqual(counts(), { syscall: 2, cpu: 1 });
  const killed =
    `servers.${server}: a sandboxed child was refused a system call the sandbox forbids ` +
    '(killed by SIGSYS: seccomp)';
  assert.deepEqual(recorded.warnings(), [
    killed,
    killed,
    `servers.${server}: a sandboxed child used its sandbox.cpuSeconds of processor time (killed by SIGXCPU); ` +
      'raise cpuSeconds if it needs more',
  ]);
  watch.close();
  assert.ok(!existsSync(watch.fifo) && !existsSync(path.dirname(watch.fifo)), 'closing removes the FIFO and folder');
});
