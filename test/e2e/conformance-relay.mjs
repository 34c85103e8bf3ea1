// The client command test/e2e/conformance-auth.test.ts gives the official conformance suite: the suite runs it with
// its scenario server's URL appended and MCP_CONFORMANCE_SCENARIO (and, for some, MCP_CONFORMANCE_CONTEXT) set. It
// hands them to the test file's process (CONFORMANCE_CONTROL), where the gateway does the scenario
// (conformance-client.ts), and leaves as that client would: its steps on stdout, its exit code. Plain JavaScript, so
// that the suite's client starts in a moment.
const control = process.env.CONFORMANCE_CONTROL;
const serverUrl = process.argv[2];
if (!control || !serverUrl) {
  process.stderr.write('conformance-relay: run by the conformance suite for conformance-auth.test.ts\n');
  process.exit(2);
}
const response = await fetch(control, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    scenario: process.env.MCP_CONFORMANCE_SCENARIO ?? '',
    serverUrl,
    context: JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}'),
  }),
});
const { exitCode, steps } = await response.json();
for (const step of steps) process.stdout.write(`${JSON.stringify(step)}\n`);
process.exit(exitCode);
