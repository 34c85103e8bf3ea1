// A test file that fails on purpose, run only by test/unit/runner.test.ts through test/run-files.sh to show
// that a failure is named at the end of the run. Not a *.test.ts file, so the suite's glob never picks it up.
import assert from 'node:assert/strict';
import { test } from 'node:test';

// A top-level test's diagnostic reaches reporters with a file and no name (a CI run's reporter once crashed on one).
test('a passing neighbour', (t) => {
  t.diagnostic('a note from a top-level test');
});

test('the fixture assertion that fails', () => {
  assert.equal(1 + 1, 3, 'the runner fixture expected to fail');
});
