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
    # Issue 29: numbers out of range, in any spelling, exit 2 naming the flag and its range
    # (not CLI11's 105 or a wrapped value), before anything is simulated.
    expect_refusal "--warmup-periods: bad value '1e9' (a number in \[0, 10000\])" --warmup-periods 1e9
    expect_refusal "--warmup-periods: bad value 'inf'" --warmup-periods inf
    expect_refusal "--seed: bad value '-1' (an integer in \[0, 18446744073709551615\])" --seed -1
    expect_refusal "--nx: bad value '2147483648' (an integer in \[16, 16384\])" --nx 2147483648
    expect_refusal "--frames: bad value 'abc'" --frames abc
    expect_refusal "--re: bad value 'nan'" --re nan
    expect_refusal "--u-lattice: bad value '1e400'" --u-lattice 1e400
    expect_refusal "--progress-seconds: bad value '0'" --progress-seconds 0
    expect_refusal "lattice updates" --warmup-periods 10000 --nx 16384 --ny 4096 --diameter 8
    # An existing case is never written over: --out, and a --cases folder's case-NNN.
    mkdir -p "$dir/x" && echo "the user's" >"$dir/x/frames.npy"
    sum=$(md5sum "$dir/x/frames.npy")
    "$worker" make-flow --out "$dir/x" --nx 128 --ny 32 --frames 10 --warmup-periods 1 >"$log" 2>&1
    [[ $? == 2 ]] || fail "make-flow into a folder holding frames.npy did not exit 2"
    grep -q -- "--out $dir/x exists and is not an empty folder (it holds frames.npy)" "$log" \
      || fail "no refusal of --out"
    [[ $(md5sum "$dir/x/frames.npy") == "$sum" ]] || fail "make-flow wrote over frames.npy"
    mkdir -p "$dir/set/case-001" && echo "kept" >"$dir/set/case-001/notes"
    printf -- '- {re: 80}\n- {re: 90}\n' >"$dir/two.yaml"
    "$worker" make-flow --out "$dir/set" --cases "$dir/two.yaml" --nx 128 --ny 32 --frames 10 >"$log" 2>&1
    [[ $? == 2 ]] || fail "make-flow --cases into a folder holding case-001 did not exit 2"
    grep -q -- "--out $dir/set/case-001 exists and is not an empty folder" "$log" || fail "no refusal of case-001"
    [[ ! -e $dir/set/case-000 ]] || fail "a case was simulated before the refusal"
    [[ $(cat "$dir/set/case-001/notes") == kept ]] || fail "case-001 was touched"
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
