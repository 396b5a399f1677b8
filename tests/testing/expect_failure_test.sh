#!/usr/bin/env bash
# expect_failure.sh (the wrapper of the "catches a ..." tests) must pass only a command that
# fails with the expected message: not one that prints it and exits 0, not one that fails
# with another message, not one that cannot run or dies of a signal.
set -uo pipefail
wrapper="$(dirname "$0")/expect_failure.sh"
failed=0
expect() {  # expect pass|fail REGEX COMMAND...
  local want=$1
  shift
  if bash "$wrapper" "$@" >/dev/null 2>&1; then got=pass; else got=fail; fi
  if [[ $got != "$want" ]]; then
    echo "FAIL: expect_failure.sh $* gave $got, expected $want"
    failed=1
  fi
}
expect pass 'is not an allowed edge' bash -c 'echo "a -> b is not an allowed edge"; exit 1'
expect pass 'on stderr' bash -c 'echo "on stderr" >&2; exit 3'
expect fail 'is not an allowed edge' bash -c 'echo "a -> b is not an allowed edge"; exit 0'
expect fail 'is not an allowed edge' bash -c 'echo "something else"; exit 1'
expect fail 'is not an allowed edge' bash -c 'echo "a -> b is not an allowed edge"; kill -9 $$'
expect fail 'anything' /no/such/program
expect fail 'anything'
if ((failed == 0)); then echo "PASS: expect_failure.sh passes only the expected failure"; fi
exit $failed
