#!/usr/bin/env bash
# The test files, in two passes: every file six at a time (the files that drive a browser in a lane of their own
# beside them, one at a time), then the few that measure the gateway under load (their own floods, fairness and
# latency figures) one at a time, so that no other file's load is read as theirs. Every pass always runs; the
# exit code is the first failure's. Which files, in which order, which unit files share a process (JOINED), and
# the checks on that list (a named file that does not exist, a test file no leg would run): test/runner/plan.mjs.
#
#   TEST_FILES="a.test.ts b.test.ts"  run exactly these files (in one pass); "a.test.ts+b.test.ts": in one process
#   TEST_LEG=second                   the second Node leg's files (see plan.mjs); TEST_FULL_SECOND_LEG=1: all
#   TEST_FILE_TIMEOUT=300000          each file's --test-timeout, in ms
#   TEST_CONCURRENCY=6                files at a time in the first pass (the browser lane's included)
#   TEST_BROWSER_CONCURRENCY=1        of those, how many may drive a browser at once
#   TEST_SUMMARY_OUT=path             also write the closing summary there (.ci/run prints every leg's at the end)
#
# The test files run as esbuild bundles (test/runner/bundle.mjs, below). TypeScript a test starts in a child
# process runs through test/ts-loader.mjs (esbuild's output, cached in node_modules/.cache/ts-tests), not tsx:
# the suite starts hundreds of Node processes and tsx's own start-up was a large part of their CPU. On Node 22
# and later, NODE_COMPILE_CACHE keeps V8's compiled code of every module between processes too.
set -uo pipefail
cd "$(dirname "$0")/.."
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$PWD/node_modules/.cache/node-compile}"
node_version="$(node --version)"

if ! listing="$(node test/runner/plan.mjs 2>"${TMPDIR:-/tmp}/plan-problems.$$")"; then
  problems="$(cat "${TMPDIR:-/tmp}/plan-problems.$$")"
  rm -f "${TMPDIR:-/tmp}/plan-problems.$$"
  echo "$problems" >&2
  [[ -n "${TEST_SUMMARY_OUT:-}" ]] && echo "$problems" >"$TEST_SUMMARY_OUT"
  echo "# test/run-files.sh under Node $node_version: no test ran (the list of files is wrong, above)"
  exit 2
fi
rm -f "${TMPDIR:-/tmp}/plan-problems.$$"
# The listing's lines are `<pass> <file>…`: one line, one process (several files: test/runner/plan.mjs, JOINED).
passes() {
  together=()
  browsers=()
  alone=()
  local pass files
  while read -r pass files; do
    case "$pass" in
      together) together+=("$files") ;;
      browsers) browsers+=("$files") ;;
      alone) alone+=("$files") ;;
    esac
  done <<<"$1"
}
passes "$listing"

# The tests of the built program and the package read the dist/ that `npm ci` built (test/built.ts) and never
# build it again. A dist/ older than the sources (after an edit, a checkout) is rebuilt here once, before any file
# reads it. An explicit TEST_FILES list is left alone: its files check dist/ themselves and say what to run.
if [[ -z "${TEST_FILES:-}" ]] && ! stale="$(node --import ./test/ts-loader.mjs test/built.ts)"; then
  echo "# dist/ is out of date ($stale): building it once (npm run build) before the tests"
  npm run -s build || { echo "# test/run-files.sh: npm run build failed (above); no test ran"; exit 2; }
fi

# Six at a time: at six the files took about 520 s of CPU (every process of the run, measured on Node 20), so
# a quiet 2-core machine's cores sit partly idle while files wait on their children, timers and sockets; eight
# would use them better, but a loaded CI machine then misses deadlines (one failed test costs a landing).
# TAP on stdout as before; beside it test/failure-summary.mjs notes the failed tests and the files cancelled by
# their timeout (with the tests still running in them), printed at the end.
summaries="$(mktemp -d)"
# Each test file runs as an esbuild bundle of itself and our modules it imports (test/runner/bundle.mjs): a
# process then loads plain JavaScript, a few chunks, with no module hooks, about a sixth of the run's CPU less.
# If the files cannot be bundled (a syntax error), they run through the TypeScript loader as they are, and each
# says what is wrong with it.
bundles="$PWD/node_modules/.cache/test-bundles/run-$$"
trap 'rm -rf "$summaries" "$bundles"' EXIT
preload=(--import ./test/ts-loader.mjs --import ./test/report-pipe.ts)
if bundled="$(node test/runner/bundle.mjs "$bundles" test/report-pipe.ts <<<"$listing" \
  2>"$summaries/bundle-errors")"; then
  preload=(--import "$bundles/test/report-pipe.mjs")
  passes "$bundled"
  # What each process of several files holds (its entry is what the slowest files and the summary name).
  grep '^#' <<<"$bundled"
else
  echo "# The test files could not be bundled; they run one to a process through test/ts-loader.mjs. esbuild said:"
  sed 's/^/#   /' "$summaries/bundle-errors"
  passes "$(tr ' ' '\n' <<<"$listing" | awk '/^(together|browsers|alone)$/ { pass = $0; next } { print pass, $0 }')"
fi
run() {
  local pass=$1 concurrency=$2
  shift 2
  (($# > 0)) || return 0
  # --enable-source-maps: a stack trace names the .ts file and line, not the bundle's.
  TEST_FAILURE_SUMMARY="$summaries/$pass" TEST_FILE_TIMES="$summaries/$pass.times" node --enable-source-maps \
    "${preload[@]}" --test --test-concurrency="$concurrency" \
    --test-force-exit --test-timeout="${TEST_FILE_TIMEOUT:-300000}" --test-reporter=tap \
    --test-reporter-destination=stdout --test-reporter=./test/failure-summary.mjs --test-reporter-destination=stdout \
    "$@"
}
# The slowest files of a pass (noted by test/failure-summary.mjs, test/file-times.mjs), with its wall time.
slowest() {
  local pass=$1 took=$2
  [[ -s "$summaries/$pass.times" ]] || return 0
  echo "# The $pass pass took ${took} s; its slowest files (s from start to end, beside the others):"
  sort -rn "$summaries/$pass.times" | head -n "${TEST_SLOWEST:-12}" |
    awk -F'\t' -v root="$PWD/" '{ file = $2; sub("^" root, "", file); printf "#   %6.1f  %s\n", $1 / 1000, file }'
}
# The browser lane runs beside the shared pass, its report kept in a file and printed after it (two reports
# interleaved line by line could not be read), its slots taken from the shared pass's six.
began=$SECONDS
lanes=${TEST_BROWSER_CONCURRENCY:-1}
((${#browsers[@]} > 0)) || lanes=0
(
  run browsers "$lanes" "${browsers[@]}" >"$summaries/browsers.tap" 2>&1
  code=$?
  echo "$((SECONDS - began))" >"$summaries/browsers.took"
  exit $code
) &
lane=$!
run together "$((${TEST_CONCURRENCY:-6} - lanes > 0 ? ${TEST_CONCURRENCY:-6} - lanes : 1))" "${together[@]}"
first=$?
slowest together $((SECONDS - began))
wait "$lane"
beside=$?
cat "$summaries/browsers.tap"
slowest browsers "$(cat "$summaries/browsers.took" 2>/dev/null)"
began=$SECONDS
run alone 1 "${alone[@]}"
second=$?
slowest alone $((SECONDS - began))
status=$((first != 0 ? first : beside != 0 ? beside : second))

# The closing summary: what failed, pass by pass. A pass that failed with nothing noted (the runner itself
# broke) says so, so that a red run always names something.
{
  for pass in together browsers alone; do
    case $pass in
      together) code=$first ;;
      browsers) code=$beside ;;
      alone) code=$second ;;
    esac
    if [[ -s "$summaries/$pass" ]]; then
      echo "Failed in the $pass pass, under Node $node_version:"
      cat "$summaries/$pass"
    elif ((code != 0)); then
      echo "The $pass pass under Node $node_version exited $code with no failed test noted: see the report above"
    fi
  done
  ((status == 0)) && echo "All ${#together[@]} + ${#browsers[@]} + ${#alone[@]} test files passed under Node $node_version"
} >"$summaries/closing"
sed 's/^/# /' "$summaries/closing"
[[ -n "${TEST_SUMMARY_OUT:-}" ]] && cp "$summaries/closing" "$TEST_SUMMARY_OUT"
exit $status
