// Loaded with --import by the test command, in the runner and in each test file's child process.
//
// Each test file runs in a child that streams its report to the runner over a pipe on stdout. Node writes to a
// pipe asynchronously on Linux, and --test-force-exit calls process.exit() once the report has been handed to
// stdout, not once it has left the process: whatever did not fit in the pipe yet (tens of KB for a file with
// many long test names) is dropped. The runner then shows the file cut short, with its tests missing from the
// counts, and a failed test among them loses its name and error (the file is only marked 'test failed').
// Node's issue: https://github.com/nodejs/node/issues/64833 (Node 20 and 22 alike; open at the time of writing).
//
// Blocking writes leave nothing queued for process.exit() to drop, and keep --test-force-exit, which a
// test that leaves a server open still needs to end its file.

/** The libuv handle under stdout, when stdout is a pipe; its setBlocking is what Node itself uses for TTYs. */
type PipeHandle = { setBlocking?: (blocking: boolean) => number };

const inTestChild = process.env.NODE_TEST_CONTEXT !== undefined;
const handle = (process.stdout as unknown as { _handle?: PipeHandle })._handle;
if (inTestChild && typeof handle?.setBlocking === 'function') {
  const status = handle.setBlocking(true);
  if (status !== 0)
    process.stderr.write(`test/report-pipe.ts: stdout could not be made blocking (libuv status ${status})\n`);
}
