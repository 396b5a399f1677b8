#!/usr/bin/env bash
# Runs each test binary twice at the same time and fails unless both runs pass: proof
# that no two processes share a scratch path (every test binary's main gives its process
# a folder of its own; tests/testing/test_main.cc). Two runs of the suite at once, or a
# capped rerun beside the individual CTest entries, used to write the same folders.
#
#   run_twice_at_once.sh BINARY[:GTEST_FILTER]...
set -uo pipefail
(($#)) || { echo "usage: $0 BINARY[:GTEST_FILTER]..." >&2; exit 2; }
failed=0
for spec in "$@"; do
  binary=${spec%%:*}
  filter='*'
  [[ $spec == *:* ]] && filter=${spec#*:}
  logs=$(mktemp -d)
  "$binary" --gtest_brief=1 --gtest_filter="$filter" >"$logs/a" 2>&1 &
  a=$!
  "$binary" --gtest_brief=1 --gtest_filter="$filter" >"$logs/b" 2>&1 &
  b=$!
  status=0
  wait $a || status=1
  wait $b || status=1
  if ((status)); then
    echo "FAIL: $(basename "$binary") ($filter), run twice at once:"
    tail -30 "$logs/a" "$logs/b"
    failed=1
  else
    echo "PASS: $(basename "$binary") ($filter), run twice at once"
  fi
  rm -rf "$logs"
done
exit $failed
