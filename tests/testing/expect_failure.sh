#!/usr/bin/env bash
# Runs a check that must fail, as proof that it can: passes only when COMMAND exits with
# a failure (non-zero, below 126: not "cannot run", not killed by a signal) AND a line of
# its output (stdout and stderr) matches REGEX (grep -E). CTest's PASS_REGULAR_EXPRESSION
# alone would pass a check that prints the message and still exits 0.
# Usage: expect_failure.sh REGEX COMMAND [ARGS...]
set -uo pipefail
if (($# < 2)); then
  echo "usage: expect_failure.sh REGEX COMMAND [ARGS...]" >&2
  exit 2
fi
regex=$1
shift
output=$("$@" 2>&1)
rc=$?
printf '%s\n' "$output"
if ((rc == 0)); then
  echo "FAIL: $1 exited 0; it should have failed with a line matching: $regex"
  exit 1
fi
if ((rc >= 126)); then
  echo "FAIL: $1 exited $rc (could not run, or killed by a signal), not the failure expected: $regex"
  exit 1
fi
if ! grep -qE -- "$regex" <<<"$output"; then
  echo "FAIL: $1 failed (exit $rc) but no line of its output matches: $regex"
  exit 1
fi
echo "PASS: $1 failed (exit $rc) as expected, with a line matching: $regex"
