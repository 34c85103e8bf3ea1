// A test file that never ends, run only by test/unit/runner.test.ts through test/run-files.sh with a short
// TEST_FILE_TIMEOUT: the file is cancelled by its timeout, and the end of the run must name it and its test.
// Not a *.test.ts file, so the suite's glob never picks it up.
import { describe, test } from 'node:test';

describe('the fixture suite', () => {
  test('a test that ends', () => {});

  test('the fixture test that never ends', async () => {
    await new Promise(() => setInterval(() => {}, 1_000));
  });
});
