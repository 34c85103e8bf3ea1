// A node:test reporter that notes only the failed tests, each with its file, line and error, in the file
// TEST_FAILURE_SUMMARY names. test/run-files.sh runs it beside TAP and prints that file after both passes: a
// failure in the middle of thousands of report lines is then also the last thing a run prints, which is the
// part of a CI log that is kept and read.
//
// Each failure is appended synchronously as it is reported: --test-force-exit ends the runner as soon as the
// last file is done, before a reporter's stream would have written what it held back.
import { appendFileSync } from 'node:fs';

/** How much of one error's text is kept (an assertion diff of a large answer can run to pages). */
const ERROR_CHARS = 1_500;

export default async function* failureSummary(source) {
  const path = process.env.TEST_FAILURE_SUMMARY;
  for await (const event of source) {
    if (event.type !== 'test:fail' || path === undefined) continue;
    const { name, file, line, details, todo } = event.data;
    // A suite or parent test that failed only because a test inside it did adds nothing to that test's line;
    // a todo test's failure fails no run.
    if (details.error?.failureType === 'subtestsFailed' || (todo !== undefined && todo !== false)) continue;
    const where = file === undefined ? '' : `\n  at ${file}${line === undefined ? '' : `:${line}`}`;
    appendFileSync(path, `- ${name}${where}\n${indent(errorText(details.error))}\n`);
  }
  yield* [];
}

/** The error that failed the test: node:test wraps a thrown error as the cause of its own. */
function errorText(error) {
  if (error === undefined || error === null) return '(no error reported)';
  const cause = error.cause ?? error;
  let text =
    cause instanceof Error
      ? `${cause.name}: ${cause.message}`
      : typeof cause === 'string'
        ? cause
        : (error.message ?? String(cause));
  // A file whose process ended badly is failed as a whole: how it ended is the news.
  if (error.exitCode !== undefined && error.exitCode !== null) text += ` (exit code ${error.exitCode})`;
  if (error.signal) text += ` (signal ${error.signal})`;
  return text.length > ERROR_CHARS
    ? `${text.slice(0, ERROR_CHARS)}… (${text.length - ERROR_CHARS} more characters in the report above)`
    : text;
}

function indent(text) {
  return text.replace(/^/gm, '    ');
}
