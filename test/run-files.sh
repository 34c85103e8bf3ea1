#!/usr/bin/env bash
# The test files, in two passes: every file six at a time, then the few that measure the gateway under load
# (their own floods, fairness and latency figures) one at a time, so that no other file's load is read as
# theirs. Both passes always run; the exit code is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
# Files that load the machine themselves and judge what they measure: alone, after the rest.
alone=(test/e2e/load.test.ts test/e2e/overload.test.ts test/e2e/overload-edges.test.ts test/e2e/flood-isolation.test.ts test/e2e/per-caller-load.test.ts)
together=()
for file in test/*/*.test.ts; do
  [[ " ${alone[*]} " == *" $file "* ]] || together+=("$file")
done
run() {
  node --import tsx --import ./test/report-pipe.ts --test --test-concurrency="$1" --test-force-exit --test-timeout=300000 "${@:2}"
}
run 6 "${together[@]}"
first=$?
run 1 "${alone[@]}"
second=$?
exit $((first != 0 ? first : second))
