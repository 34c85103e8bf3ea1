// Which test files a run of test/run-files.sh runs, and in which pass: kept apart from the shell script so the
// choice and its checks can be read and tested (test/unit/runner.test.ts). Prints one line per process,
// `together <file>…`, `browsers <file>…` or `alone <file>…`, in the order they should start (a line that names
// several files runs them in one process: JOINED); on a wrong list it prints why on stderr and exits 2, before
// any test runs.
//
//   TEST_FILES="a.test.ts b.test.ts"  exactly these files (the runner's own test drives fixtures this way);
//                                    "a.test.ts+b.test.ts" runs the two in one process, as JOINED groups run
//   TEST_LEG=second                   the second Node leg's files (below); otherwise every file
//   TEST_FULL_SECOND_LEG=1            the second leg runs every file after all
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The suite: what `test/*\/*.test.ts` names. A test file anywhere else would run on no leg. */
const SUITE_GLOB = /^test\/[^/]+\/[^/]+\.test\.ts$/;

/**
 * Files that load the machine themselves and judge what they measure (their own floods, fairness and latency
 * figures): one at a time, after the rest, so that no other file's load is read as theirs.
 */
export const ALONE = [
  'test/e2e/load.test.ts',
  'test/e2e/overload.test.ts',
  'test/e2e/overload-edges.test.ts',
  'test/e2e/flood-isolation.test.ts',
  'test/e2e/per-caller-load.test.ts',
  // Replicas behind HAProxy, whose health checks time out at 300 ms: under the shared pass's load HAProxy took
  // healthy replicas out as well (a CI-like run at load 20), and the test read that as the gateway's doing.
  'test/e2e/rolling-restart.test.ts',
  // The same balancer with Chromium and three gateways restarted in turn: about 40 s of real browsing and restarts.
  'test/e2e/identity-replicas.test.ts',
  // The conformance suite's 22 auth scenarios, each a gateway, the suite's servers and a browser flow: three at a time
  // about 3 min beside other work (load 20 to 27 on 2 cores; one after another, 6.5 to 9 min), not for the shared pass.
  'test/e2e/conformance-auth.test.ts',
];

/**
 * The longest files start first, so that none of them is left running alone at the end of the first pass
 * (slowest first, as measured; a file not named here starts after these, in name order). fuzz-edge-bodies holds
 * most of the fuzz-edge.test.ts it was split from, and takes its place; packaging, image-default and
 * cli-messages left the list when they stopped building the TypeScript of their own.
 */
export const LONGEST = [
  'test/e2e/package-install.test.ts',
  'test/e2e/cli.test.ts',
  'test/e2e/security.test.ts',
  'test/e2e/upstream-oauth.test.ts',
  'test/e2e/fuzz-edge-bodies.test.ts',
  'test/e2e/supervision.test.ts',
  'test/e2e/transparency.test.ts',
  'test/e2e/upstream-oauth-replicas.test.ts',
  'test/e2e/policy.test.ts',
  'test/e2e/mcp-remote.test.ts',
  'test/e2e/status-page.test.ts',
  'test/e2e/log-format.test.ts',
  'test/e2e/tracing-more.test.ts',
  'test/e2e/per-caller.test.ts',
  'test/e2e/search-mode.test.ts',
  'test/e2e/faults.test.ts',
  'test/e2e/status-axes.test.ts',
  'test/e2e/status-charts.test.ts',
];

/**
 * The second leg's end-to-end smoke set: one file for each part of the platform the gateway leans on that
 * changes between Node versions, chosen among the files that are quick and steady.
 */
export const SMOKE = [
  // node:http server and client under the SDK v2 client (Hono on @hono/node-server, undici's fetch)
  'test/e2e/sdk-client.test.ts',
  // streamed answers (SSE) through the gateway, backpressure and stream ends
  'test/e2e/transparency-streams.test.ts',
  // an SSE upstream read through undici
  'test/e2e/sse-upstream.test.ts',
  // stdio children: spawn, pipes, signals, exit (execa, child_process)
  'test/e2e/lifecycle.test.ts',
  // the built program under this Node (dist/ from `npm ci`), its exit codes and stderr
  'test/e2e/cli-messages.test.ts',
  // server.close, keep-alive sockets and in-flight requests on shutdown (they changed between 20 and 22)
  'test/e2e/drain.test.ts',
  // fs.watch and the config reload
  'test/e2e/reload.test.ts',
  // ioredis against the shared Redis (net, timers)
  'test/e2e/redis-gaps.test.ts',
  // WebCrypto and jose: signed tokens, JWKS, the OAuth flows
  'test/e2e/oauth.test.ts',
  // OpenTelemetry's exporters (http, protobuf) and AsyncLocalStorage context
  'test/e2e/tracing.test.ts',
];

/**
 * A file that drives a real browser (it asks test/services.ts for Chromium). Browsers are the heaviest thing the
 * shared pass runs: several side by side ran three to four times slower than one alone (upstream-oauth: 85 s
 * beside others, 22 s alone), and dragged the files beside them. They run in a lane of their own, one at a time,
 * beside the shared pass (test/run-files.sh).
 */
const DRIVES_A_BROWSER = /\bawait chromium\(/;

/** Whether a file's tests depend on the Node version by name: it must run on both legs. */
const NODE_SPECIFIC = /onlyOnNode\(|KEEPS_EXACT_NUMBERS|process\.versions?\b/;
/** Exact numbers and CEL: the number handling that differs between Node 20 and 22. */
const NUMBERS_OR_CEL = /(exact|cel)[^/]*\.test\.ts$/;

/**
 * What a test file may do to its process that would reach another file's tests in the same one: a top-level
 * beforeEach or afterEach (node:test runs it around every test of the process), a top-level await (the tests of
 * the files before it would run while it waits), writes to process.env, process-wide listeners and exit codes,
 * replaced globals, mocked timers. A file that does none of these may share a process (JOINED).
 */
const OWN_PROCESS = new RegExp(
  [
    String.raw`^(?:beforeEach|afterEach)\(`,
    String.raw`^(?:await\b|(?:const|let|var) [^=\n]+= await\b)`,
    String.raw`process\.env(?:\.\w+|\[[^\]]*\])\s*(?:=(?!=)|\?\?=|\|\|=)|delete process\.env|assign\(process\.env`,
    String.raw`\bprocess\.(?:on|once|addListener|prependListener|chdir|umask)\(|process\.exitCode\s*=`,
    String.raw`globalThis\.\w+\s*=(?!=)|\bmock\.timers\b`,
  ].join('|'),
  'm',
);

/**
 * Unit files run this many to a process: a process's start (Node, the runner's bootstrap, the packages a file
 * imports) was about 0.35 s of CPU, more than most unit files' tests, and 103 of them took 51 s of CPU one to a
 * process against 15 s in one. Groups of this size keep the pass's cores busy in parallel.
 */
export const JOINED_FILES = 20;

/** The unit files among `files` that may share a process, in groups of JOINED_FILES, in their order. */
export function joined(root, files) {
  const joinable = files.filter(
    (file) => file.startsWith('test/unit/') && !OWN_PROCESS.test(readFileSync(path.join(root, file), 'utf8')),
  );
  const groups = [];
  for (let at = 0; at < joinable.length; at += JOINED_FILES) groups.push(joinable.slice(at, at + JOINED_FILES));
  return groups.filter((group) => group.length > 1);
}

/** Every `*.test.ts` under test/, relative to the root, in name order. */
export function allTestFiles(root) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.test.ts')) found.push(relative);
    }
  };
  walk('test');
  return found.sort();
}

/** The files of the second Node leg, from the suite: see SMOKE, NODE_SPECIFIC and NUMBERS_OR_CEL. */
export function secondLeg(root, suite) {
  return suite.filter(
    (file) =>
      file.startsWith('test/unit/') ||
      SMOKE.includes(file) ||
      NUMBERS_OR_CEL.test(file) ||
      NODE_SPECIFIC.test(readFileSync(path.join(root, file), 'utf8')),
  );
}

/**
 * The plan: { together, browsers, alone, problems }: the shared pass, the browser lane that runs beside it, and
 * the files that run one at a time after both. problems lists what makes the run wrong before it starts: a file
 * named here or in TEST_FILES that does not exist, a test file outside the suite's glob, a file bound to a
 * Node version left out of the second leg.
 */
export function plan(root, env) {
  const problems = [];
  const missing = (list, where) => {
    for (const file of list)
      if (!existsSync(path.join(root, file))) problems.push(`${where} names ${file}, which does not exist`);
  };
  if (env.TEST_FILES?.trim()) {
    const entries = env.TEST_FILES.trim()
      .split(/\s+/)
      .map((entry) => entry.split('+').filter(Boolean));
    const named = entries.flat();
    missing(named, 'TEST_FILES');
    return { together: named, browsers: [], alone: [], joined: entries.filter((e) => e.length > 1), problems };
  }
  missing(ALONE, 'test/runner/plan.mjs (ALONE)');
  missing(LONGEST, 'test/runner/plan.mjs (LONGEST)');
  missing(SMOKE, 'test/runner/plan.mjs (SMOKE)');
  const every = allTestFiles(root);
  for (const file of every)
    if (!SUITE_GLOB.test(file)) problems.push(`${file} is outside test/<folder>/*.test.ts: no leg would run it`);
  let suite = every.filter((file) => SUITE_GLOB.test(file));
  if (env.TEST_LEG === 'second' && env.TEST_FULL_SECOND_LEG !== '1') {
    suite = secondLeg(root, suite);
    for (const file of every)
      if (NODE_SPECIFIC.test(readFileSync(path.join(root, file), 'utf8')) && !suite.includes(file))
        problems.push(`${file} depends on the Node version but the second leg leaves it out`);
  }
  const shared = [
    ...LONGEST.filter((file) => suite.includes(file)),
    ...suite.filter((file) => !LONGEST.includes(file) && !ALONE.includes(file)),
  ];
  const browsers = shared.filter((file) => DRIVES_A_BROWSER.test(readFileSync(path.join(root, file), 'utf8')));
  const together = shared.filter((file) => !browsers.includes(file));
  return {
    together,
    browsers,
    alone: ALONE.filter((file) => suite.includes(file)),
    joined: joined(root, together),
    problems,
  };
}

/** A pass's processes, each a list of files: a JOINED group where its first file was, every other file alone. */
export function processes(files, groups) {
  const groupOf = new Map(groups.flatMap((group) => group.map((file) => [file, group])));
  return files.flatMap((file) => {
    const group = groupOf.get(file);
    if (group === undefined) return [[file]];
    return group[0] === file ? [group] : [];
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const { together, browsers, alone, joined: groups, problems } = plan(root, process.env);
  if (problems.length) {
    process.stderr.write(
      `test/run-files.sh: the list of test files is wrong:\n${problems.map((p) => `  ${p}\n`).join('')}`,
    );
    process.exit(2);
  }
  const lines = Object.entries({ together, browsers, alone }).flatMap(([pass, files]) =>
    processes(files, groups).map((files) => `${pass} ${files.join(' ')}\n`),
  );
  process.stdout.write(lines.join(''));
}
