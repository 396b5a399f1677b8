#!/usr/bin/env bash
# gantry-worker make-flow end to end. Usage:
#   make_flow_e2e.sh MPIEXEC WORKER SCENARIO      SCENARIO: single | refusals | cases_np2
# Exit 0: pass; anything else: fail, with the reason.
set -uo pipefail
mpiexec=$1 worker=$2 scenario=$3
dir=$(mktemp -d)
log=$dir/log
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL ($scenario): $*"; echo "--- output:"; cat "$log"; exit 1; }
# The npy header's shape tuple, e.g. "(40, 3, 32, 128)".
npy_shape() { head -c 128 "$1" | tr -d '\0' | grep -ao "'shape': ([0-9, ]*)" | sed "s/'shape': //"; }

case $scenario in
  single)
    "$worker" make-flow --out "$dir/case" --nx 128 --ny 32 --frames 40 --warmup-periods 2 >"$log" 2>&1 \
      || fail "exit code $?"
    grep -q "Re = 100 on the diameter" "$log" || fail "the output does not say Re is on the diameter"
    grep -qE "[0-9.]+ MLUPS" "$log" || fail "no MLUPS in the output"
    [[ $(npy_shape "$dir/case/frames.npy") == "(40, 3, 32, 128)" ]] || fail "frames.npy shape $(npy_shape "$dir/case/frames.npy")"
    [[ $(npy_shape "$dir/case/mask.npy") == "(32, 128)" ]] || fail "mask.npy shape"
    grep -q "'descr': '<f4'" "$dir/case/frames.npy" || fail "frames.npy is not float32"
    for key in nx ny re u_lattice nu tau diameter obstacle every frames warmup_steps seed strouhal probe normalisation \
               vorticity offset scale mlups; do
      grep -q "\"$key\"" "$dir/case/flow.json" || fail "flow.json lacks \"$key\""
    done
    ls -a "$dir/case" | grep -q tmp && fail "a temporary file was left behind"
    ;;
  refusals)
    expect_refusal() {  # MESSAGE ARGS...: exit 2 and MESSAGE on stderr
      local message=$1; shift
      "$worker" make-flow --out "$dir/x" "$@" >"$log" 2>&1
      local code=$?
      [[ $code == 2 ]] || fail "make-flow $* exited $code, expected 2"
      grep -q -- "$message" "$log" || fail "make-flow $*: no '$message' in the message"
      [[ ! -e $dir/x/flow.json ]] || fail "make-flow $* wrote flow.json"
    }
    expect_refusal "too close to 0.5" --u-lattice 0.01 --re 200
    expect_refusal "sound speed" --u-lattice 0.3
    expect_refusal "too few cells across" --diameter 4
    expect_refusal "cell Reynolds number" --re 400
    expect_refusal "cylinder or square" --obstacle triangle
    printf -- '- {re: 100}\n- {re: 100, diameter: 3}\n' >"$dir/bad.yaml"
    expect_refusal "case 2: --diameter 3" --cases "$dir/bad.yaml"
    printf -- '- {speed: 1}\n' >"$dir/unknown.yaml"
    expect_refusal "not a case setting" --cases "$dir/unknown.yaml"
    ;;
  cases_np2)
    printf -- '- {re: 80, seed: 1}\n- {re: 100, obstacle: square, seed: 2}\n- {re: 120, seed: 3}\n' >"$dir/cases.yaml"
    "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" make-flow --out "$dir/set" --cases "$dir/cases.yaml" \
      --nx 128 --ny 32 --frames 30 --warmup-periods 2 >"$log" 2>&1 || fail "exit code $?"
    grep -q "3 cases over 2 ranks" "$log" || fail "no plan line"
    grep -qE "^\| case-000 \| 0 \| 80 \| cylinder" "$log" || fail "case-000 not on rank 0 in the summary"
    grep -qE "^\| case-001 \| 1 \| 100 \| square" "$log" || fail "case-001 not on rank 1 in the summary"
    grep -q "3 of 3 cases written" "$log" || fail "not every case was written"
    for k in 000 001 002; do
      [[ -s $dir/set/case-$k/frames.npy && -s $dir/set/case-$k/mask.npy ]] || fail "case-$k lacks its .npy files"
    done
    grep -q '"kind": "square"' "$dir/set/case-001/flow.json" || fail "case-001 is not the square"
    grep -q '"re": 120.0' "$dir/set/case-002/flow.json" || fail "case-002 is not Re 120"
    # One case on two ranks is refused (it would be simulated twice into one folder).
    "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" make-flow --out "$dir/one" >"$log" 2>&1
    code=$?
    (( code != 0 )) || fail "a single case under mpirun -np 2 was not refused"
    grep -q "needs --cases FILE" "$log" || fail "the refusal does not name --cases"
    ;;
  *) fail "unknown scenario" ;;
esac
echo "PASS ($scenario)"
