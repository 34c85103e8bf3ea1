// How long each test file took, from its start to its end in the runner: one line per file, `<ms>\t<file>`,
// appended to the file TEST_FILE_TIMES names. test/failure-summary.mjs (the runner's own reporter) passes every
// event here, so that a third reporter does not push node:test past its ten listeners; test/run-files.sh prints the
// slowest of each pass after it: on a slow CI run, which files the time went to is the first thing to know.
import { appendFileSync } from 'node:fs';
import { sourceFile } from './runner/bundled-source.mjs';

/** Notes the file's time when `event` is a whole file's test:complete; anything else is passed over. */
export function noteFileTime(out, event, isFileItself) {
  if (out === undefined || event?.type !== 'test:complete') return;
  const data = event.data;
  const ms = data?.details?.duration_ms;
  if (data?.nesting === 0 && isFileItself(data) && typeof ms === 'number')
    appendFileSync(out, `${Math.round(ms)}\t${sourceFile(data.file)}\n`);
}
