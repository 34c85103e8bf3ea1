// The suite's runner itself (test/run-files.sh, test/runner/plan.mjs, test/failure-summary.mjs): a red run must
// say what failed in its last lines, a hung file must be named with the test it hung in (not pass as
// 'cancelled' beside '# fail 0'), a wrong list of files must stop the run, and every test file must run on some
// Node leg. The fixtures it drives live in test/runner-fixtures/, outside the suite's glob.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KEEPS_EXACT_NUMBERS } from '../../protocol/exact-json.js';
import { newState, note, render } from '../failure-summary.mjs';
import { allTestFiles, JOINED_FILES, joined, plan, processes, SMOKE } from '../runner/plan.mjs';
import { nodeSide } from '../services.js';
import { tempDir } from '../temp.js';
import { scaled } from '../timing.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FAILS = 'test/runner-fixtures/fails.fixture.ts';
const HANGS = 'test/runner-fixtures/hangs.fixture.ts';

/** test/run-files.sh as CI runs it, on the given files; the variables of this test's own runner left out. */
function runFiles(files: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  const {
    NODE_TEST_CONTEXT: _child,
    TEST_SUMMARY_OUT: _out,
    TEST_LEG: _leg,
    TEST_FULL_SECOND_LEG: _full,
    ...env
  } = process.env;
  const child = spawn('bash', ['test/run-files.sh'], {
    cwd: ROOT,
    env: { ...env, TEST_FILES: files, TEST_FILE_TIMEOUT: String(timeoutMs), TEST_CONCURRENCY: '2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

describe('test/run-files.sh', () => {
  test(
    'a failing file and a file hung past its timeout are both named, ' + 'with their tests, in the last 40 lines',
    async () => {
      // Long enough for the failing fixture to start and fail on a loaded machine, short for the hung one.
      const { code, output } = await runFiles(`${FAILS} ${HANGS}`, scaled(6_000));
      const last = output.trimEnd().split('\n').slice(-40).join('\n');
      assert.notEqual(code, 0, 'the run fails');
      // The place is the .ts file's line, though the file ran as a bundle (test/runner/bundle.mjs).
      const written = readFileSync(path.join(ROOT, FAILS), 'utf8').split('\n');
      const line = written.findIndex((text) => text.includes("test('the fixture assertion that fails'")) + 1;
      for (const wanted of [
        `at ${FAILS}:${line}`,
        'the fixture assertion that fails',
        'the runner fixture expected to fail',
        `cancelled by its timeout: ${HANGS}`,
        'the fixture suite > the fixture test that never ends',
      ])
        assert.ok(last.includes(wanted), `the last 40 lines lack ${JSON.stringify(wanted)}:\n${last}`);
      // Where the time went: each file with its seconds, the failing one among them (test/file-times.mjs).
      assert.match(output, /The together pass took \d+ s; its slowest files/);
      assert.match(output, new RegExp(`^# +\\d+\\.\\d  ${FAILS.replaceAll('.', '\\.')}$`, 'm'));
    },
  );

  test('files joined in one process are each named with their tests: the failure, the hang by its file', async () => {
    const { code, output } = await runFiles(`${FAILS}+${HANGS}`, scaled(6_000));
    const last = output.trimEnd().split('\n').slice(-40).join('\n');
    assert.notEqual(code, 0, 'the run fails');
    const line = readFileSync(path.join(ROOT, FAILS), 'utf8')
      .split('\n')
      .findIndex((text) => text.includes("test('the fixture assertion that fails'"));
    for (const wanted of [
      `- failed: the fixture assertion that fails\n#   at ${FAILS}:${line + 1}`,
      'cancelled by its timeout: test/joined/together-1.mjs',
      `which ran: ${FAILS} ${HANGS}`,
      `still running: the fixture suite > the fixture test that never ends (${HANGS})`,
    ])
      assert.ok(last.includes(wanted), `the last 40 lines lack ${JSON.stringify(wanted)}:\n${last}`);
    // One process ran both: the hung file's first test passed beside the failing file's.
    assert.match(output, /^# test\/joined\/together-1\.mjs runs in one process: /m);
    assert.match(output, /^ *ok \d+ - a test that ends$/m);
  });

  test('a named file that does not exist stops the run before any test runs, naming it', async () => {
    const { code, output } = await runFiles(`${FAILS} test/unit/no-such-file.test.ts`, 60_000);
    assert.equal(code, 2, output);
    assert.match(output, /TEST_FILES names test\/unit\/no-such-file\.test\.ts, which does not exist/);
    assert.doesNotMatch(output, /the fixture assertion that fails/, 'no test ran');
  });
});

describe('the Node legs (test/runner/plan.mjs)', () => {
  const first = plan(ROOT, {});
  const second = plan(ROOT, { TEST_LEG: 'second' });
  const all = (leg: typeof first) => [...leg.together, ...leg.browsers, ...leg.alone];

  test('the lists are right: every file they name exists, every test file is in the glob', () => {
    assert.deepEqual(first.problems, []);
    assert.deepEqual(second.problems, []);
  });

  test('the first leg runs every test file once; the load files run alone, after the rest', () => {
    assert.deepEqual([...all(first)].sort(), allTestFiles(ROOT));
    assert.ok(first.alone.includes('test/e2e/load.test.ts'));
    assert.ok(!first.together.includes('test/e2e/load.test.ts'));
  });

  test('the files that drive a browser run in their own lane, and every one of them does', () => {
    const drives = (file: string) => /\bawait chromium\(/.test(readFileSync(path.join(ROOT, file), 'utf8'));
    assert.ok(first.browsers.includes('test/e2e/status-page.test.ts'));
    assert.deepEqual(first.together.filter(drives), [], 'a browser file in the shared pass');
    assert.ok(first.browsers.every(drives), 'a file in the browser lane that drives no browser');
    // The alone pass keeps its files, browsers or not: they run after both.
    assert.ok(first.alone.includes('test/e2e/identity-replicas.test.ts'));
    assert.ok(!first.browsers.includes('test/e2e/identity-replicas.test.ts'));
  });

  test('the second leg runs the unit files, the exact-numbers and CEL files, the smoke set and no load file', () => {
    const files = all(second);
    for (const file of allTestFiles(ROOT).filter((f) => f.startsWith('test/unit/')))
      assert.ok(files.includes(file), file);
    for (const file of ['test/e2e/exact-numbers.test.ts', 'test/e2e/cel-exact-numbers.test.ts', ...SMOKE])
      assert.ok(files.includes(file), file);
    assert.deepEqual(second.alone, []);
    const e2e = (list: string[]) => list.filter((f) => f.startsWith('test/e2e/')).length;
    assert.ok(e2e(files) < e2e(all(first)) / 4, 'the second leg runs a few end-to-end files, not all');
    assert.deepEqual(
      [...all(plan(ROOT, { TEST_LEG: 'second', TEST_FULL_SECOND_LEG: '1' }))].sort(),
      allTestFiles(ROOT),
    );
  });

  test('unit files share processes, each file in one; a file that touches its process keeps its own', () => {
    for (const leg of [first, second]) {
      const joinedFiles = leg.joined.flat();
      assert.equal(new Set(joinedFiles).size, joinedFiles.length, 'a file in two processes');
      assert.ok(joinedFiles.every((file) => leg.together.includes(file) && file.startsWith('test/unit/')));
      assert.ok(leg.joined.every((group) => group.length > 1 && group.length <= JOINED_FILES));
      const ran = processes(leg.together, leg.joined);
      assert.deepEqual(ran.flat().sort(), [...leg.together].sort(), 'every file of the pass runs once');
    }
    assert.ok(first.joined.flat().includes('test/unit/backoff.test.ts'));
    // Writes to process.env would reach the files beside it.
    assert.ok(!first.joined.flat().includes('test/unit/config.test.ts'));
    // A top-level beforeEach would run around the other files' tests; a mocked clock would be theirs too.
    assert.ok(!first.joined.flat().includes('test/unit/client-credentials.test.ts'));
    assert.ok(!first.joined.flat().includes('test/unit/idle-heap.test.ts'));
    const root = tempDir('mcp-gw-plan-');
    mkdirSync(path.join(root, 'test/unit'), { recursive: true });
    const files: Record<string, string> = {
      'a.test.ts': "test('a', () => {});\n",
      'b.test.ts': 'beforeEach(() => {});\n',
      'c.test.ts': 'process.env.FOO = "1";\n',
      'd.test.ts': 'const gateway = await start();\n',
      'e.test.ts': "const port = process.env.PORT;\nbefore(() => {});\ntest('e', () => {});\n",
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(root, 'test/unit', name), text);
    const unit = Object.keys(files).map((name) => `test/unit/${name}`);
    assert.deepEqual(joined(root, unit), [['test/unit/a.test.ts', 'test/unit/e.test.ts']]);
    assert.deepEqual(processes(unit, joined(root, unit)), [
      ['test/unit/a.test.ts', 'test/unit/e.test.ts'],
      ['test/unit/b.test.ts'],
      ['test/unit/c.test.ts'],
      ['test/unit/d.test.ts'],
    ]);
  });

  test('TEST_FILES joins the files written with + into one process', () => {
    const named = plan(ROOT, { TEST_FILES: `${FAILS}+${HANGS} test/unit/config.test.ts` });
    assert.deepEqual(named.together, [FAILS, HANGS, 'test/unit/config.test.ts']);
    assert.deepEqual(named.joined, [[FAILS, HANGS]]);
  });

  test('a test file outside test/<folder>/*.test.ts, which no leg would run, is a problem of the list', () => {
    const root = tempDir('mcp-gw-plan-');
    mkdirSync(path.join(root, 'test/e2e/deeper'), { recursive: true });
    writeFileSync(path.join(root, 'test/e2e/deeper/lost.test.ts'), '');
    writeFileSync(path.join(root, 'test/e2e/found.test.ts'), '');
    const { problems } = plan(root, {});
    assert.ok(
      problems.includes('test/e2e/deeper/lost.test.ts is outside test/<folder>/*.test.ts: no leg would run it'),
      problems.join('\n'),
    );
    assert.ok(problems.some((problem) => problem.includes('names test/e2e/load.test.ts, which does not exist')));
  });
});

describe(
  'the Node side a test runs on (test/services.ts), ' + "read from the version, not from the code's detection",
  () => {
    test('20 below 22, 22 from 22 on', () => {
      assert.equal(nodeSide('20.19.0'), 20);
      assert.equal(nodeSide('21.7.3'), 20);
      assert.equal(nodeSide('22.0.0'), 22);
      assert.equal(nodeSide('24.11.1'), 22);
    });

    test("protocol/exact-json.ts keeps numbers exact exactly where this Node's version says it can", () => {
      assert.equal(KEEPS_EXACT_NUMBERS, nodeSide() === 22, `Node ${process.versions.node}`);
    });
  },
);

describe('test/failure-summary.mjs', () => {
  const file = path.join(ROOT, 'test/e2e/some.test.ts');
  const event = (type: string, name: string, nesting: number, extra: Record<string, unknown> = {}) => ({
    type,
    data: { file, name, nesting, ...extra },
  });

  test('tests of a concurrent suite interleave; the one still running when its file is cancelled is named', () => {
    const state = newState();
    for (const e of [
      event('test:dequeue', 'suite', 0),
      event('test:dequeue', 'quick', 1),
      event('test:dequeue', 'stuck', 1),
      event('test:pass', 'quick', 1),
      event('test:fail', file, 0, { details: { error: { failureType: 'testTimeoutFailure', message: 'timed out' } } }),
    ])
      note(state, e);
    const text = render(state);
    assert.match(text, /cancelled by its timeout: test\/e2e\/some\.test\.ts\n {2}still running: suite > stuck\n/);
    assert.doesNotMatch(text, /quick/);
  });

  test('a failed test is named with its suite and the first lines of its error; its failed parents are not', () => {
    const state = newState();
    const error = {
      failureType: 'testCodeFailure',
      cause: { name: 'AssertionError', message: 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj' },
    };
    for (const e of [
      event('test:dequeue', 'suite', 0),
      event('test:dequeue', 'broken', 1),
      event('test:fail', 'broken', 1, { line: 7, details: { error } }),
      event('test:fail', 'suite', 0, { details: { error: { failureType: 'subtestsFailed' } } }),
    ])
      note(state, e);
    const text = render(state);
    assert.match(text, /^- failed: suite > broken\n {2}at test\/e2e\/some\.test\.ts:7\n {4}AssertionError: a\n/);
    assert.match(text, /\n {4}h\n {4}\(… the rest is in the report above\)\n$/, text);
    assert.equal(text.match(/^- /gm)?.length, 1);
  });

  test('a top-level diagnostic (a file, no name) is no result and breaks nothing', () => {
    const state = newState();
    const diagnostic = { type: 'test:diagnostic', data: { file, nesting: 0, message: 'a note' } };
    assert.equal(note(state, diagnostic), false);
    // A result event without a name (no such event is known) is not the file's own either.
    assert.equal(note(state, { type: 'test:fail', data: { file, nesting: 0 } }), true);
    assert.match(render(state), /^- failed: \(a test without a name\)\n {2}at test\/e2e\/some\.test\.ts\n/);
  });
});
