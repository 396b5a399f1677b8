#!/usr/bin/env bash
# A resume never mixes settings (issue 45, items 4-8), with gantry-worker and gantry:
#   - a run's checkpoint carries the record of its settings: `--resume` with a changed
#     one (a flag, or run.json edited by hand) is refused naming the setting and both
#     values (exit 2), the run and its checkpoints untouched;
#   - repeating the recorded value (or its default: --base-batch-size 64) is no change;
#   - more --epochs continues the run and is written to run.json and log.txt;
#   - effective learning rates out of range are refused naming the flags;
#   - generate's numbers: --seed -1, 2^64, 1e23 and a huge --count refused quoting the value
#     typed (gantry-worker generate and the gantry CLI), and --interpolate 0,INT64_MAX
#     refused without a wrapped row.
# Usage: resume_settings_e2e.sh WORKER GANTRY
# KEEP_GOING=1 reports every failed check instead of stopping at the first (to see, on an
# older build, which checks fail).
set -uo pipefail
worker=$1 gantry=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: ${*:0:400}"
  failures=$((failures + 1))
  [[ ${KEEP_GOING:-0} == 1 ]] || exit 1
}

python3 "$here/tests/testing/tiny_mnist.py" "$tmp/mnist"
train=(train --dataset mnist --data-dir "$tmp/mnist" --batch-size 16 --quality off --keep-checkpoints 1)
"$worker" "${train[@]}" --epochs 2 --out "$tmp/run" >"$tmp/first.log" 2>&1 || { cat "$tmp/first.log"; fail "first run"; }
sums() { md5sum "$tmp/run/checkpoints"/* "$tmp/run/epochs.csv" | awk '{print $1}'; }
before=$(sums)

# expect_refused WHAT MESSAGE CMD...: exit 2, the message in the output, the run untouched.
expect_refused() {
  local what=$1 message=$2
  shift 2
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  ((rc == 2)) || { fail "$what: exit $rc, expected 2: $out"; return; }
  [[ $out == *"$message"* ]] || { fail "$what: no '$message' in: $out"; return; }
  [[ $(sums) == "$before" ]] || fail "$what: the run's checkpoints or epochs.csv changed"
}

# Flags that would change a recorded setting: named with both values.
expect_refused "--quality full" "--quality full (the run's: off)" "$worker" train --resume "$tmp/run" --quality full
expect_refused "--lr" "--lr 0.5 (the run's: not given (its default, 0.0001))" \
  "$worker" train --resume "$tmp/run" --lr 0.5
expect_refused "--base-batch-size 32" "--base-batch-size 32 (the run's: not given (its default, 64))" \
  "$worker" train --resume "$tmp/run" --base-batch-size 32
expect_refused "fewer --epochs" "--epochs 1 (the run's: 2)" "$worker" train --resume "$tmp/run" --epochs 1

# The recorded value, or its default, is no change (the run is finished: nothing to train).
for same in "--base-batch-size 64" "--lr 1e-4" "--lr-scaling none" "--quality off" "--batch-size 16" "--epochs 2"; do
  # shellcheck disable=SC2086
  out=$("$worker" train --resume "$tmp/run" $same 2>&1) || fail "resume $same: $out"
  [[ $out == *"already finished"* ]] || fail "resume $same: $out"
done

# run.json edited by hand: the checkpoint's record is the truth.
edit() {  # edit NAME VALUE: run.json's settings.NAME = VALUE, in a copy of the run
  rm -rf "$tmp/edited" && cp -a "$tmp/run" "$tmp/edited"
  python3 - "$tmp/edited/run.json" "$1" "$2" <<'PY'
import json, sys
path, name, value = sys.argv[1:]
j = json.load(open(path))
j["settings"][name] = value
json.dump(j, open(path, "w"), indent=2)
PY
}
for pair in "lr 0.001" "lr-scaling linear" "base-batch-size 32" "warmup-steps 10" "warmup-start 0.5" \
            "d-lr-ratio 2" "quality fast" "beta1 0.9" "adam-eps 1e-08"; do
  read -r name value <<<"$pair"
  edit "$name" "$value"
  out=$("$worker" train --resume "$tmp/edited" 2>&1)
  rc=$?
  ((rc == 2)) || fail "edited $name: exit $rc: $out"
  [[ $out == *"--$name is $value in run.json or on the command line"* ]] || fail "edited $name: $out"
  [[ $out == *"in the checkpoint"* ]] || fail "edited $name: $out"
done

# More epochs: continues, and says so in run.json and log.txt.
"$worker" train --resume "$tmp/run" --epochs 3 >"$tmp/more.log" 2>&1 || { cat "$tmp/more.log"; fail "--epochs 3"; }
python3 - "$tmp/run/run.json" <<'PY' || fail "run.json does not record the change"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["settings"]["epochs"] == "3", j["settings"]
assert j["config"]["epochs"] == 3, j["config"]["epochs"]
c = j["resume_changes"][-1]
assert (c["setting"], c["from"], c["to"]) == ("epochs", "2", "3"), c
PY
grep -q "resume changes --epochs: 2 -> 3" "$tmp/run/log.txt" || fail "log.txt: no change line"
[[ $(grep -c . "$tmp/run/epochs.csv") == 4 ]] || fail "epochs.csv: $(cat "$tmp/run/epochs.csv")"
# ... and the next resume takes 3 as the run's.
out=$("$worker" train --resume "$tmp/run" 2>&1) || fail "resume after more epochs: $out"
[[ $out == *"already finished (3 epoch rows)"* ]] || fail "resume after more epochs: $out"

# Effective learning rates: checked at every batch size, naming the flags.
before=$(sums)
expect_refused "--d-lr-ratio 1e-300" "--d-lr-ratio 1e-300" \
  "$worker" "${train[@]}" --d-lr-ratio 1e-300 --out "$tmp/lr1"
expect_refused "linear scaling to 1280" "learning rate at global batch 4096 would be 1280" \
  "$worker" train --dataset mnist --data-dir "$tmp/mnist" --quality off --lr 0.3125 --lr-scaling linear \
  --base-batch-size 1 --batch-size 16,4096 --out "$tmp/lr2"
[[ ! -e $tmp/lr1 && ! -e $tmp/lr2 ]] || fail "a refused run left a folder"

# generate's numbers, refused quoting what was typed.
gen=(generate --run "$tmp/run" --out "$tmp/gen")
for seed in -1 18446744073709551616 1e23; do
  expect_refused "worker --seed $seed" "--seed: bad value '$seed'" "$worker" "${gen[@]}" --count 2 --seed "$seed"
  expect_refused "gantry --seed $seed" "--seed: bad value '$seed'" "$gantry" generate job-1 --count 2 --seed "$seed"
done
expect_refused "worker --count 1e30" "--count: bad value '99999999999999999999'" \
  "$worker" "${gen[@]}" --count 99999999999999999999
expect_refused "gantry --count" "--count: bad value '99999999999999999999'" \
  "$gantry" generate job-1 --count 99999999999999999999
out=$("$worker" "${gen[@]}" --interpolate 0,9223372036854775807 --steps 3 2>&1)
(($? == 2)) || fail "--interpolate 0,INT64_MAX: $out"
[[ $out == *"row 9223372036854775807 is past"* && $out != *"-9223372036854775808"* ]] || fail "--interpolate: $out"
[[ ! -e $tmp/gen ]] || fail "a refused generate left $tmp/gen"
((failures == 0)) || exit 1
echo "PASS"
