#!/usr/bin/env bash
# Outputs that are never replaced, and a stop that stops (issue 45), on the real binary:
#   race:     two exports to one --out at once: one writes, the other exits 2 naming
#             --out and the file is the winner's, whole; the same for two generates to
#             one --out folder; and two `train --out X` at once (one run per folder:
#             the other exits 2 naming the folder);
#   slash:    generate --out NEWDIR/ (a trailing slash) writes NEWDIR, nothing inside a
#             staging folder and no false "exists and is not an empty folder";
#   loop:     a symbolic link loop as --noise-file exits 2 naming the file;
#   signals:  SIGTERM or SIGINT to `gantry-worker generate` (1 rank, and mpirun -np 2)
#             while it generates ends it within 5 s with 128 + the signal, and its
#             generate-<name>.partial-<pid>/ staging folder is removed (no --out either).
# Usage: outputs_and_stops_e2e.sh MPIEXEC GANTRY_WORKER [PART...]   (default: all five)
set -uo pipefail
mpiexec=$1 worker=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
shift 2
parts=("$@")
((${#parts[@]})) || parts=(race train slash loop signals)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log=$dir/log
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$log" 2>/dev/null; exit 1; }
ok() { "$@" >"$log" 2>&1 || fail "exit $?: $*"; }

# A tiny digit set of its own (64 images), so the test needs no dataset package.
python3 "$here/tests/testing/tiny_mnist.py" "$dir/mnist"
ok "$worker" train --dataset mnist --data-dir "$dir/mnist" --batch-size 16 --max-steps 2 --quality off \
  --keep-checkpoints 1 --out "$dir/run"

# race KIND: two writers to one output at once, five times; exactly one may succeed.
race() {
  local kind=$1 round a b ra rb out
  for round in 1 2 3 4 5; do
    out=$dir/race/$kind-$round
    mkdir -p "$dir/race"
    if [[ $kind == export ]]; then
      out=$out.safetensors
      "$worker" export --run "$dir/run" --format safetensors --out "$out" >"$dir/a.log" 2>&1 &
      a=$!
      "$worker" export --run "$dir/run" --format safetensors --dtype bf16 --out "$out" >"$dir/b.log" 2>&1 &
      b=$!
    else
      "$worker" generate --run "$dir/run" --count 8 --seed 1 --out "$out" >"$dir/a.log" 2>&1 &
      a=$!
      "$worker" generate --run "$dir/run" --count 8 --seed 2 --out "$out" >"$dir/b.log" 2>&1 &
      b=$!
    fi
    wait "$a"; ra=$?
    wait "$b"; rb=$?
    cat "$dir/a.log" "$dir/b.log" >"$log"
    [[ "$ra$rb" == 02 || "$ra$rb" == 20 ]] || fail "$kind race $round: exits $ra and $rb, expected one 0 and one 2"
    grep -qF -- "--out $out" "$log" || fail "$kind race $round: the refusal does not name --out $out"
    # The file (or folder) is the winner's, whole.
    local winner=a
    [[ $ra == 0 ]] || winner=b
    if [[ $kind == export ]]; then
      local want=F32
      [[ $winner == b ]] && want=BF16
      python3 - "$out" "$want" <<'EOF' || fail "$kind race $round: $out is not the winner's whole file"
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
dtypes = {v["dtype"] for k, v in header.items() if k != "__metadata__"}
end = max(v["data_offsets"][1] for k, v in header.items() if k != "__metadata__")
# A bf16 export keeps BatchNorm's statistics in float32; an fp32 one has no BF16.
made = "BF16" if "BF16" in dtypes else "F32"
assert made == sys.argv[2] and len(raw) == 8 + n + end, (dtypes, len(raw))
EOF
    else
      local seed=1
      [[ $winner == b ]] && seed=2
      grep -q "\"seed\": $seed" "$out/generate.json" || fail "$kind race $round: $out is not the winner's"
      [[ $(ls "$out" | grep -c '^sample-') == 8 ]] || fail "$kind race $round: $out holds a mix"
    fi
  done
  ls -d "$dir"/race/*.partial-* "$dir"/race/*.tmp.* >/dev/null 2>&1 && fail "$kind race: a temporary was left behind"
}
# Two runs into one new folder at once, three times: one trains, the other is refused.
train_race() {
  local round a b ra rb out
  for round in 1 2 3; do
    out=$dir/trains/run-$round
    "$worker" train --dataset mnist --data-dir "$dir/mnist" --batch-size 16 --max-steps 2 --quality off --seed 1 \
      --out "$out" >"$dir/a.log" 2>&1 &
    a=$!
    "$worker" train --dataset mnist --data-dir "$dir/mnist" --batch-size 16 --max-steps 2 --quality off --seed 2 \
      --out "$out" >"$dir/b.log" 2>&1 &
    b=$!
    wait "$a"; ra=$?
    wait "$b"; rb=$?
    cat "$dir/a.log" "$dir/b.log" >"$log"
    [[ "$ra$rb" == 02 || "$ra$rb" == 20 ]] || fail "train race $round: exits $ra and $rb, expected one 0 and one 2"
    grep -qF "$out" "$log" || fail "train race $round: the refusal does not name $out"
    local seed=1
    [[ $ra == 0 ]] || seed=2
    grep -q "\"seed\": $seed" "$out/run.json" || fail "train race $round: run.json is not the winner's"
  done
}

race_both() {
  race export
  race generate
}

# A trailing slash names the folder itself.
slash() {
ok "$worker" generate --run "$dir/run" --count 3 --out "$dir/slash/new/"
[[ -s $dir/slash/new/generate.json && $(ls "$dir/slash/new" | grep -c '^sample-') == 3 ]] \
  || fail "generate --out NEWDIR/ did not write NEWDIR"
ls -A "$dir/slash/new" | grep -q partial && fail "generate --out NEWDIR/ left its staging folder inside NEWDIR"
return 0
}

# A link loop as --noise-file is refused input.
loop() {
ln -s "$dir/loop.npy" "$dir/loop.npy"
"$worker" generate --run "$dir/run" --noise-file "$dir/loop.npy" --out "$dir/loopout" >"$log" 2>&1
rc=$?
[[ $rc == 2 ]] || fail "a symbolic link loop as --noise-file: exit $rc, expected 2"
grep -qF "$dir/loop.npy" "$log" || fail "the refusal does not name $dir/loop.npy"
}

# stopped SIGNAL LAUNCHER...: generate under LAUNCHER, SIGNAL once its staging folder
# exists; it must end within 5 s with 128 + SIGNAL and leave no staging folder nor --out.
stopped() {
  local sig=$1
  shift
  local out=$dir/stop/$sig-$#
  rm -rf "$dir/stop" && mkdir -p "$dir/stop"
  "$@" "$worker" generate --run "$dir/run" --count 20000 --batch 1 --out "$out" >"$log" 2>&1 &
  local pid=$! i
  for i in $(seq 600); do compgen -G "$out.partial-*" >/dev/null && break; sleep 0.1; done
  compgen -G "$out.partial-*" >/dev/null || fail "generate under '$*' made no staging folder in 60 s"
  sleep 1
  kill -"$sig" "$pid"
  local start=$SECONDS
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid"
    fail "generate under '$*' still running 10 s after SIG$sig"
  fi
  wait "$pid"
  local rc=$? took=$((SECONDS - start))
  ((took <= 5)) || fail "generate under '$*' took $took s to end after SIG$sig"
  ((rc != 0)) || fail "generate under '$*' exited 0 after SIG$sig"
  ls -d "$out".partial-* >/dev/null 2>&1 && fail "SIG$sig left the staging folder $(ls -d "$out".partial-*)"
  [[ -e $out ]] && fail "SIG$sig left --out $out"
  return 0
}
signals() {
  stopped TERM env
  stopped INT env
  stopped TERM "$mpiexec" --allow-run-as-root --oversubscribe -np 2
}

for part in "${parts[@]}"; do
  case $part in
    race) race_both ;;
    train) train_race ;;
    slash) slash ;;
    loop) loop ;;
    signals) signals ;;
    *) echo "unknown part $part"; exit 2 ;;
  esac
  echo "$part: ok"
done
echo PASS
