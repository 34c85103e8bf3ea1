// A node:test reporter that keeps, in the file TEST_FAILURE_SUMMARY names, a short account of what failed:
// each failed test with its file, line and the first lines of its error, and each test file that was cancelled
// (its --test-timeout ran out) or ended badly, with the tests that were still running in it. test/run-files.sh
// runs it beside TAP and prints that file at the end: a failure in the middle of thousands of report lines is
// then also the last thing a run prints, which is the part of a CI log that is kept and read.
//
// Why the running tests: a file killed by its timeout reports only itself ('test timed out after …', counted as
// cancelled, with '# fail 0' when nothing else failed); the test that hung never reports. The runner does relay
// each test's dequeue (it is about to run) from the file's process, so the tests dequeued and never finished
// are the ones the file was stuck in.
//
// The summary is rewritten synchronously whenever it changes: --test-force-exit ends the runner as soon as the
// last file is done, before a reporter's stream would have written what it held back.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { noteFileTime } from './file-times.mjs';
import { joinedFiles, sourceFile, sourcePlace } from './runner/bundled-source.mjs';

/** How much of one error is kept: its first lines (an assertion diff of a large answer can run to pages). */
const ERROR_LINES = 8;
const ERROR_CHARS = 1_000;

export default async function* failureSummary(source) {
  const out = process.env.TEST_FAILURE_SUMMARY;
  const times = process.env.TEST_FILE_TIMES;
  const state = newState();
  for await (const event of source) {
    try {
      noteFileTime(times, event, isFileItself);
    } catch {} // a file's time is a help, never a reason to end the runner
    if (out === undefined) continue;
    let changed;
    try {
      changed = note(state, event);
    } catch (error) {
      // A reporter that throws ends the whole runner (exit code 7) with no summary at all: note the event instead.
      state.entries.push({ kind: 'unread', type: event?.type, file: event?.data?.file, error });
      changed = true;
    }
    if (changed) writeFileSync(out, render(state));
  }
  yield* [];
}

/** What the reporter remembers: per file, the tests running now; the files stopped; the entries to print. */
export function newState() {
  return { running: new Map(), entries: [], stopped: new Set() };
}

/** Takes one reporter event into the state; true when what the summary says has changed. */
export function note(state, event) {
  const { type, data } = event;
  // Diagnostics, plans, enqueues and the like carry no test's result (and may carry no name).
  if (type !== 'test:dequeue' && type !== 'test:pass' && type !== 'test:fail') return false;
  if (data?.file === undefined) return false;
  if (isFileItself(data)) return type === 'test:fail' ? noteFileFailure(state, data) : false;
  // A test's own events name the .ts file (node:test maps its place through the source map), its file's the
  // bundle that ran: both are keyed by the .ts file.
  const file = sourceFile(data.file);
  const running = runningIn(state, file);
  if (type === 'test:dequeue') {
    // Its parent: the latest test still running one level up (tests of a concurrent suite interleave).
    const parent = running.findLast((test) => test.nesting === data.nesting - 1);
    running.push({
      nesting: data.nesting,
      name: data.name,
      title: parent ? `${parent.title} > ${data.name}` : data.name,
    });
    // A test dequeued after its file was stopped (the runner relays the child's events late) belongs to it.
    return state.stopped.has(file);
  }
  if (type !== 'test:pass' && type !== 'test:fail') return false;
  const at = running.findLastIndex((test) => test.nesting === data.nesting && test.name === data.name);
  const title = at === -1 ? (data.name ?? '(a test without a name)') : running[at].title;
  if (at !== -1) running.splice(at, 1);
  if (type === 'test:pass') return false;
  const { details, todo } = data;
  // A suite or parent test that failed only because a test inside it did adds nothing to that test's line;
  // a todo test's failure fails no run.
  if (details?.error?.failureType === 'subtestsFailed' || (todo !== undefined && todo !== false)) return false;
  state.entries.push({
    kind: 'test',
    title,
    file,
    line: data.line,
    column: data.column,
    error: details?.error,
  });
  return true;
}

/** The runner's own test for a whole file: named by the file's path (absolute or relative, by Node version). */
export function isFileItself(data) {
  if (data.nesting !== 0 || typeof data.name !== 'string' || typeof data.file !== 'string') return false;
  return data.name === data.file || path.resolve(data.name) === path.resolve(data.file);
}

function runningIn(state, file) {
  let tests = state.running.get(file);
  if (tests === undefined) state.running.set(file, (tests = []));
  return tests;
}

function noteFileFailure(state, data) {
  const error = data.details?.error;
  if (error?.failureType === 'subtestsFailed') return false;
  const file = sourceFile(data.file);
  // A process of several files (test/runner/plan.mjs, JOINED): its tests are noted under their own files.
  const members = joinedFiles(data.file);
  for (const stopped of [file, ...(members ?? [])]) state.stopped.add(stopped);
  state.entries.push({ kind: 'file', file, members, error });
  return true;
}

/** The summary's text: one entry per failed test or stopped file, the error's first lines indented below. */
export function render(state) {
  const lines = [];
  for (const entry of state.entries) {
    // A bundle's report names the .ts file and line it was made from (test/runner/bundled-source.mjs).
    const place = typeof entry.file === 'string' ? sourcePlace(entry.file, entry.line, entry.column) : undefined;
    const file = place ? path.relative(process.cwd(), place.file) || place.file : '?';
    const line = place?.line;
    if (entry.kind === 'unread') {
      lines.push(`- the failure summary could not read a ${entry.type} event of ${file}; the report above has it`);
      lines.push(indent(errorText(entry.error)));
      continue;
    }
    if (entry.kind === 'test') {
      lines.push(`- failed: ${entry.title}`, `  at ${file}${line === undefined ? '' : `:${line}`}`);
    } else {
      const timedOut = entry.error?.failureType === 'testTimeoutFailure';
      lines.push(`- ${timedOut ? 'cancelled by its timeout' : 'ended badly'}: ${file}`);
      if (entry.members)
        lines.push(`  which ran: ${entry.members.map((m) => path.relative(process.cwd(), m)).join(' ')}`);
      const leaves = (entry.members ?? [entry.file]).flatMap((held) => stillRunning(state, held, entry.members));
      if (leaves.length === 0) lines.push('  no test of it had started');
      lines.push(...leaves);
    }
    lines.push(indent(errorText(entry.error)));
  }
  return `${lines.join('\n')}\n`;
}

/** The lines naming the innermost tests of `file` still running: a suite runs as long as any test in it does. */
function stillRunning(state, file, members) {
  const running = state.running.get(file) ?? [];
  const leaves = running.filter((test) => !running.some((other) => other.title.startsWith(`${test.title} > `)));
  const where = members ? ` (${path.relative(process.cwd(), file)})` : '';
  return leaves.map((test) => `  still running: ${test.title}${where}`);
}

/** The error that failed the test: node:test wraps a thrown error as the cause of its own. */
export function errorText(error) {
  if (error === undefined || error === null) return '(no error reported)';
  const cause = error.cause ?? error;
  let text =
    cause instanceof Error || (typeof cause === 'object' && cause?.message !== undefined)
      ? `${cause.name ?? 'Error'}: ${cause.message}`
      : typeof cause === 'string'
        ? cause
        : (error.message ?? String(cause));
  // A file whose process ended badly is failed as a whole: how it ended is the news.
  if (error.exitCode !== undefined && error.exitCode !== null) text += ` (exit code ${error.exitCode})`;
  if (error.signal) text += ` (signal ${error.signal})`;
  const lines = text.trimEnd().split('\n');
  let kept = lines.slice(0, ERROR_LINES).join('\n');
  if (kept.length > ERROR_CHARS) kept = `${kept.slice(0, ERROR_CHARS)}…`;
  return kept.length < text.trimEnd().length ? `${kept}\n(… the rest is in the report above)` : kept;
}

function indent(text) {
  return text.replace(/^/gm, '    ');
}
