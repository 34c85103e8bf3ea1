#!/usr/bin/env bash
# The test files, in two passes: every file six at a time, then the few that measure the gateway under load
# (their own floods, fairness and latency figures) one at a time, so that no other file's load is read as
# theirs. Both passes always run; the exit code is the first failure's.
#
# TypeScript runs through test/ts-loader.mjs (esbuild's output, cached in node_modules/.cache/ts-tests), not
# tsx: the suite starts hundreds of Node processes and tsx's own start-up was a large part of their CPU. On
# Node 22 and later, NODE_COMPILE_CACHE keeps V8's compiled code of every module between processes too.
set -uo pipefail
cd "$(dirname "$0")/.."
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$PWD/node_modules/.cache/node-compile}"
# Files that load the machine themselves and judge what they measure: alone, after the rest.
alone=(test/e2e/load.test.ts test/e2e/overload.test.ts test/e2e/overload-edges.test.ts test/e2e/flood-isolation.test.ts test/e2e/per-caller-load.test.ts)
# The longest files start first, so that none of them is left running alone at the end of the first pass
# (slowest first, as measured; a file not named here starts after these, in name order).
longest=(test/e2e/packaging.test.ts test/e2e/package-install.test.ts test/e2e/fuzz-edge.test.ts test/e2e/cli.test.ts
  test/e2e/rolling-restart.test.ts test/e2e/security.test.ts test/e2e/upstream-oauth.test.ts test/e2e/mrtr.test.ts
  test/e2e/supervision.test.ts test/e2e/transparency.test.ts test/e2e/upstream-oauth-replicas.test.ts test/e2e/policy.test.ts
  test/e2e/mcp-remote.test.ts test/e2e/status-page.test.ts test/e2e/log-format.test.ts test/e2e/tracing-more.test.ts
  test/e2e/image-default.test.ts test/e2e/per-caller.test.ts test/e2e/search-mode.test.ts test/e2e/faults.test.ts
  test/e2e/status-axes.test.ts test/e2e/status-charts.test.ts test/e2e/cli-messages.test.ts)
together=()
for file in "${longest[@]}"; do
  [[ -f "$file" ]] && together+=("$file")
done
for file in test/*/*.test.ts; do
  [[ " ${alone[*]} ${together[*]} " == *" $file "* ]] || together+=("$file")
done
# Six at a time: at six the files took about 520 s of CPU (every process of the run, measured on Node 20), so
# a quiet 2-core machine's cores sit partly idle while files wait on their children, timers and sockets; eight
# would use them better, but a loaded CI machine then misses deadlines (one failed test costs a landing).
# TEST_CONCURRENCY overrides it.
# TAP on stdout as before; beside it test/failure-summary.mjs notes the failed tests alone, printed at the end.
summaries="$(mktemp -d)"
trap 'rm -rf "$summaries"' EXIT
run() {
  # --enable-source-maps: a test's reported location is its line in the .ts file, not in esbuild's output.
  TEST_FAILURE_SUMMARY="$summaries/$2" node --enable-source-maps --import ./test/ts-loader.mjs --import ./test/report-pipe.ts --test --test-concurrency="$1" --test-force-exit \
    --test-timeout=300000 --test-reporter=tap --test-reporter-destination=stdout --test-reporter=./test/failure-summary.mjs --test-reporter-destination=stdout "${@:3}"
}
run "${TEST_CONCURRENCY:-6}" together "${together[@]}"
first=$?
run 1 alone "${alone[@]}"
second=$?
for pass in together alone; do
  if [[ -s "$summaries/$pass" ]]; then
    echo "# Failed in the $pass pass, under Node $(node --version):"
    sed 's/^/# /' "$summaries/$pass"
  fi
done
exit $((first != 0 ? first : second))
