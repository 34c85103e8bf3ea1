// A node:test reporter that notes how long each test file took, from its start to its end in the runner: one
// line per file, `<ms>\t<file>`, appended to the file TEST_FILE_TIMES names. test/run-files.sh prints the slowest
// of each pass after it: on a slow CI run, which files the time went to is the first thing to know.
import { appendFileSync } from 'node:fs';
import { isFileItself } from './failure-summary.mjs';

export default async function* fileTimes(source) {
  const out = process.env.TEST_FILE_TIMES;
  for await (const event of source) {
    if (out === undefined || event.type !== 'test:complete') continue;
    const data = event.data;
    const ms = data?.details?.duration_ms;
    // A reporter that throws ends the whole runner (exit code 7): an event it cannot read is passed over.
    try {
      if (data?.nesting === 0 && isFileItself(data) && typeof ms === 'number')
        appendFileSync(out, `${Math.round(ms)}\t${data.file}\n`);
    } catch {}
  }
  yield* [];
}
