#!/usr/bin/env bash
# gantry-worker generate and export end to end on the real binary: a tiny DCGAN trained a
# few steps on a slice of Fashion-MNIST and a tiny Pix2Pix on a flow case;
#   sharded: generate on 1 and under mpirun -np 3 gives the same samples, bit for bit
#            (the DCGAN's and the Pix2Pix's), with the files docs/export.md lists;
#   walk:    --interpolate A,B --steps S starts at latent row A of the seeded draw;
#   refusals: each bad request exits 2 naming the fix and leaves everything as it was:
#            --count 0, an --out holding a file or unwritable, a run without checkpoints, another
#            model's checkpoint, a missing --checkpoint, an export over an existing file;
#   init-from: train --init-from an export, and a truncated file refused by name;
#   g-ema:   a run with --g-ema generates and exports its weight average, and says so.
# Usage: generate_e2e.sh MPIEXEC GANTRY_WORKER
set -uo pipefail
mpiexec=$1 worker=$2
data=/usr/share/datasets/fashion-mnist
[[ -e $data/train-images-idx3-ubyte.gz || -e $data/train-images-idx3-ubyte ]] \
  || { echo "FAIL: no $data (bash scripts/install_deps.sh installs dataset-fashion-mnist)"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log=$dir/log
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$log"; exit 1; }
ok() { "$@" >"$log" 2>&1 || fail "exit $?: $*"; }
# refused FIX ARGS...: gantry-worker ARGS exits 2 and its output names FIX.
refused() {
  local fix=$1
  shift
  "$worker" "$@" >"$log" 2>&1
  local rc=$?
  [[ $rc == 2 ]] || fail "exit $rc, not 2: $*"
  grep -qF -- "$fix" "$log" || fail "the refusal does not say '$fix': $*"
}

ok "$worker" train --data-dir "$data" --limit-images 128 --batch-size 32 --epochs 1 --max-steps 2 --quality off \
  --out "$dir/run"
# Sharded: 1 rank and 3 ranks, batches of 4 over 10 samples (groups 4 + 4 + 2).
ok "$worker" generate --run "$dir/run" --count 10 --seed 5 --batch 4 --out "$dir/one"
ok "$mpiexec" --allow-run-as-root --oversubscribe -np 3 "$worker" generate --run "$dir/run" --count 10 --seed 5 \
  --batch 4 --out "$dir/three"
for f in samples.npy inputs.npy grid.png sample-00000.png sample-00009.png generate.json; do
  [[ -s $dir/one/$f ]] || fail "no $f"
done
[[ $(ls "$dir/one"/sample-*.png | wc -l) == 10 ]] || fail "not 10 sample PNGs"
cmp -s "$dir/one/samples.npy" "$dir/three/samples.npy" || fail "1 rank and 3 ranks generate different samples"
grep -q '"ranks": 3' "$dir/three/generate.json" || fail "generate.json does not record 3 ranks"
ls -d "$dir"/*.partial-* >/dev/null 2>&1 && fail "a staging folder was left behind"

# The walk starts at row 2 of the seeded draw (the inputs' first row, as float32 bytes).
ok "$worker" generate --run "$dir/run" --seed 5 --interpolate 2,7 --steps 4 --out "$dir/walk"
row() { tail -c "+$((129 + $2 * 400))" "$1" | head -c 400; }  # .npy header 128 bytes, rows of 100 floats
[[ $(row "$dir/walk/inputs.npy" 0 | od -An -tx1) == $(row "$dir/one/inputs.npy" 2 | od -An -tx1) ]] \
  || fail "the walk does not start at row 2"
[[ $(row "$dir/walk/inputs.npy" 3 | od -An -tx1) == $(row "$dir/one/inputs.npy" 7 | od -An -tx1) ]] \
  || fail "the walk does not end at row 7"

# Refusals.
refused "--count: bad value '0' (an integer in [1, 100000])" generate --run "$dir/run" --count 0 --out "$dir/zero"
refused "--count: bad value '1e400'" generate --run "$dir/run" --count 1e400 --out "$dir/zero"
refused "--seed: bad value '-1'" generate --run "$dir/run" --count 2 --seed -1 --out "$dir/zero"
refused "--batch: bad value '9223372036854775808'" generate --run "$dir/run" --count 2 --batch 9223372036854775808 \
  --out "$dir/zero"
refused "--checkpoint: bad value '0x10'" export --run "$dir/run" --checkpoint 0x10 --format safetensors \
  --out "$dir/g.st"
[[ -e $dir/zero ]] && fail "a refused generate created its --out"
mkdir "$dir/taken" && echo mine > "$dir/taken/notes.txt"
refused "not an empty folder" generate --run "$dir/run" --count 2 --out "$dir/taken"
[[ $(cat "$dir/taken/notes.txt") == mine && $(ls "$dir/taken" | wc -l) == 1 ]] || fail "the user's folder changed"
refused "cannot create" generate --run "$dir/run" --count 2 --out /proc/gantry-nowhere/samples
mkdir -p "$dir/empty" && cp "$dir/run/run.json" "$dir/empty/"
refused "checkpoint" generate --run "$dir/empty" --count 2 --out "$dir/none"
refused "no checkpoint of step 999; it holds steps" generate --run "$dir/run" --checkpoint 999 --count 2 --out "$dir/none"
refused "exists" export --run "$dir/run" --format safetensors --out "$dir/taken/notes.txt"
refused "generate runs fp32 or bf16" generate --run "$dir/run" --count 2 --precision fp16 --out "$dir/none"
refused "only safetensors" export --run "$dir/run" --format onnx --out "$dir/g.onnx"
refused "use fp32 or bf16" export --run "$dir/run" --format safetensors --dtype fp16 --out "$dir/g.st"
[[ $(cat "$dir/taken/notes.txt") == mine ]] || fail "export wrote over a file"

# --g-ema: the same training with a weight average (its live weights are the same) generates
# and exports the average, and says so.
ok "$worker" train --data-dir "$data" --limit-images 128 --batch-size 32 --epochs 1 --max-steps 2 --quality off \
  --g-ema 0.9 --out "$dir/ema"
ok "$worker" generate --run "$dir/ema" --count 10 --seed 5 --batch 4 --out "$dir/ema-one"
grep -qF '"weights": "weight average (--g-ema)"' "$dir/ema-one/generate.json" || fail "generate.json: no average"
grep -qF '"weights": "trained"' "$dir/one/generate.json" || fail "generate.json: the plain run's generator"
cmp -s "$dir/one/samples.npy" "$dir/ema-one/samples.npy" && fail "--g-ema: generate used the live generator"
ok "$worker" export --run "$dir/ema" --format safetensors --out "$dir/ema-g.safetensors"
head -c 4096 "$dir/ema-g.safetensors" | grep -aqF 'weight average (--g-ema)' || fail "export: no average in metadata"

# train --init-from an export starts from it; a truncated file is refused by name.
ok "$worker" export --run "$dir/run" --format safetensors --out "$dir/g.safetensors"
ok "$worker" train --data-dir "$data" --limit-images 64 --batch-size 32 --epochs 1 --max-steps 1 --quality off \
  --init-from "$dir/g.safetensors" --out "$dir/from-g"
grep -qF "the generator starts from $dir/g.safetensors" "$log" || fail "--init-from did not load the generator"
head -c 1000 "$dir/g.safetensors" > "$dir/cut.safetensors"
refused "cut.safetensors: not a valid safetensors file" train --data-dir "$data" --limit-images 64 --batch-size 32 \
  --epochs 1 --max-steps 1 --quality off --init-from "$dir/cut.safetensors" --out "$dir/from-cut"

# Pix2Pix on a 96x48 flow case (its centre 32x32 window): from the case's frames, 1 rank and 2 ranks alike.
ok "$worker" make-flow --out "$dir/flow/case-1" --nx 96 --ny 48 --re 100 --frames 8 --seed 1
ok "$worker" train --model pix2pix --dataset flow --data-dir "$dir/flow" --image-size 32 --ngf 8 --ndf 8 \
  --batch-size 4 --epochs 1 --max-steps 2 --out "$dir/p2p"
ok "$worker" generate --run "$dir/p2p" --case "$dir/flow/case-1" --frame 1 --count 3 --batch 2 --out "$dir/p1"
ok "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" generate --run "$dir/p2p" \
  --case "$dir/flow/case-1" --frame 1 --count 3 --batch 2 --out "$dir/p2"
cmp -s "$dir/p1/samples.npy" "$dir/p2/samples.npy" || fail "pix2pix: 1 rank and 2 ranks differ"
refused "--condition" generate --run "$dir/p2p" --count 3 --out "$dir/p3"
refused "latent" generate --run "$dir/run" --case "$dir/flow/case-1" --out "$dir/p4"
# Another model's checkpoint in the DCGAN run's folder.
cp -r "$dir/run" "$dir/mixed" && rm "$dir/mixed/checkpoints/"* && cp "$dir/p2p/checkpoints/"* "$dir/mixed/checkpoints/"
refused "pix2pix" generate --run "$dir/mixed" --count 2 --out "$dir/none"
echo PASS
