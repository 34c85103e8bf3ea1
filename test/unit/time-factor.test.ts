// TEST_TIME_FACTOR stretches the harness's event waits (until, eventually): on a slow machine CI sets it, and
// a wait that only delays a failure then gives a correct gateway the time it needs. Checked in a child
// process, since the factor is read once when test/timing.ts loads (the child loads only that file, not the
// gateway behind test/e2e/harness.ts, which passes the same waits on). Lower bounds only: a timer never fires
// early, however loaded the machine.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How long `until(() => false, 100)` waited, in a process with TEST_TIME_FACTOR set to `factor`. */
function waited(factor: string | undefined): number {
  const script =
    "const { until } = await import('./test/timing.ts'); const t = performance.now();" +
    'const held = await until(() => false, 100); console.log(JSON.stringify({ held, ms: performance.now() - t }));';
  const env = { ...process.env, TEST_TIME_FACTOR: factor ?? '' };
  const run = spawnSync(process.execPath, ['--import', './test/ts-loader.mjs', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  const { held, ms } = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
  assert.equal(held, false);
  return ms;
}

test('until waits its limit times TEST_TIME_FACTOR (a factor below 1 or not a number counts as 1)', () => {
  assert.ok(waited('5') >= 500, 'factor 5: at least 5 × 100 ms');
  assert.ok(waited(undefined) >= 100);
  assert.ok(waited('0.1') >= 100, 'never shortened');
});

test("the e2e files' until and eventually are these, from test/timing.ts", async () => {
  const harness = await import('../e2e/harness.js');
  const timing = await import('../timing.js');
  assert.equal(harness.until, timing.until);
  assert.equal(harness.eventually, timing.eventually);
});
