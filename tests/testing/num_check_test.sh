#!/usr/bin/env bash
# num_check (num_check.sh) must fail on every value that is not a finite number, for each
# form of check the end-to-end scripts use, and pass where the check holds: proof that
# their loss and tolerance checks can fail on a NaN.
set -uo pipefail
source "$(dirname "$0")/num_check.sh"
failed=0
expect() {  # expect pass|fail EXPRESSION NAME=VALUE...
  local want=$1
  shift
  if num_check "$@" 2>/dev/null; then got=pass; else got=fail; fi
  if [[ $got != "$want" ]]; then
    echo "FAIL: num_check $* gave $got, expected $want"
    failed=1
  fi
}
# The checks of the scripts (flow_e2e, flow_learns_e2e, mpi_worker_e2e, bf16_vs_fp32_mnist, test_arm64).
checks=('v > 0' 'v > 10' 'v > 0 and v < 100' 'abs(v - b) / b <= 0.01 and v > 0' 'v > 0.05 and v < 0.5 * b')
for check in "${checks[@]}"; do
  for bad in nan -nan NaN inf -inf '' abc 1e400; do
    expect fail "$check" v="$bad" b=20
    expect fail "$check" v=20 b="$bad"
  done
done
expect pass 'v > 0' v=0.5
expect pass 'v > 0 and v < 100' v=1.5e1
expect pass 'abs(v - b) / b <= 0.01 and v > 0' v=1.004 b=1.0
expect fail 'abs(v - b) / b <= 0.01 and v > 0' v=1.02 b=1.0
if ((failed)); then exit 1; fi
echo "num_check: every non-finite or non-numeric value fails every check"
