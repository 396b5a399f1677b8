#!/usr/bin/env bash
# gantry-worker train --dataset images end to end under `mpirun -np 2`, on colour pictures
# this script draws (python3 and zlib only). Usage:
#   images_e2e.sh MPIEXEC WORKER SCENARIO [EMOJI_DIR]
#                                   SCENARIO: cache | resume | generate | refusals | judge | emoji
#   cache     a folder is packed once into RUNS/.image-cache, reused while unchanged, packed
#             again (saying why) when a file is added, the out-of-date pack removed
#   resume    a packed set at 32 px with --mirror, killed mid epoch 2 and resumed: the same
#             state and epoch rows as a run never interrupted
#   generate  a 64 px RGB model: its sample grid, `generate` (colour PNGs, samples.npy
#             [K,3,64,64]) and `export` with the image DCGAN's metadata
#   refusals  a set of another size than --image-size, --dropout, --channels on MNIST, no
#             --data-dir, a folder with no image: exit 2 naming the thing, nothing trained
#   judge     train-judge on a packed set's class folders; a run on that set then scores
#             its epochs with the judge (class entropies too); an unlabelled set is refused
#   emoji     the Noto emoji set (scripts/emoji_images.py EMOJI_DIR, which the test command
#             runs): all 3,786 packed in 10 classes, and a few steps of 32 px training
#             with --mirror and every --augment transform, scored without labels
# Exit 0: pass; anything else: fail, with the reason.
set -uo pipefail
mpiexec=$1 worker=$2 scenario=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
fail() { echo "FAIL ($scenario): $*"; echo "--- output:"; cat "$log"; exit 1; }
mpi() { "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" "$@" >"$log" 2>&1; }
state_crc() { "$worker" inspect-checkpoint "$1" | grep '"state_crc32"'; }
rows_without_timing() { cut -d, -f1,2,6,7,8,12,16-19 "$1/epochs.csv"; }

# draw DIR COUNT SIDE: COUNT RGB PNGs of SIDE x SIDE in DIR/warm and DIR/cool (gradients
# with a disc, seeded by their index).
draw() {
  python3 - "$@" <<'EOF'
import os, random, struct, sys, zlib
folder, count, side = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
for k in range(count):
    rng = random.Random(k)
    cls = "warm" if k % 2 else "cool"
    os.makedirs(os.path.join(folder, cls), exist_ok=True)
    cx, cy, r = rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.7), rng.uniform(0.1, 0.25)
    disc = [rng.randrange(256) for _ in range(3)]
    rows = []
    for y in range(side):
        row = bytearray(b"\0")
        for x in range(side):
            u, v = x / (side - 1), y / (side - 1)
            if (u - cx) ** 2 + (v - cy) ** 2 < r * r:
                row += bytes(disc)
            elif cls == "warm":
                row += bytes((255, int(200 * u), int(80 * v)))
            else:
                row += bytes((int(80 * v), int(200 * u), 255))
        rows.append(bytes(row))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)) +
           chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b""))
    with open(os.path.join(folder, cls, f"{k:03d}.png"), "wb") as f:
        f.write(png)
EOF
}

small=(--ngf 8 --ndf 8 --quality off --progress-seconds 1)
case $scenario in
  cache)
    draw "$tmp/pictures" 24 40 || fail "cannot draw the test pictures"
    mpi train --dataset images --data-dir "$tmp/pictures" --image-size 32 --batch-size 8 --max-steps 2 \
        "${small[@]}" --out "$tmp/runs/a" || fail "first run: exit code $?"
    grep -q "packing the images in $tmp/pictures into $tmp/runs/.image-cache/pictures-32px-3c-.*\.pack (first use)" "$log" \
      || fail "the first run did not say it packs the folder"
    packs=("$tmp"/runs/.image-cache/*.pack)
    [[ ${#packs[@]} == 1 && -s ${packs[0]} ]] || fail "expected one pack in the cache, found ${packs[*]}"
    mpi train --dataset images --data-dir "$tmp/pictures" --image-size 32 --batch-size 8 --max-steps 2 \
        "${small[@]}" --out "$tmp/runs/b" || fail "second run: exit code $?"
    grep -q "using ${packs[0]} (the images in $tmp/pictures packed earlier; unchanged since)" "$log" \
      || fail "the second run did not reuse the pack"
    grep -q "packing the images" "$log" && fail "the second run packed again"
    draw "$tmp/more" 26 40 && cp "$tmp/more/warm/025.png" "$tmp/pictures/warm/" || fail "cannot add a picture"
    mpi train --dataset images --data-dir "$tmp/pictures" --image-size 32 --batch-size 8 --max-steps 2 \
        "${small[@]}" --out "$tmp/runs/c" || fail "third run: exit code $?"
    grep -q "(the folder changed since ${packs[0]} was packed)" "$log" || fail "the third run did not say why it packs"
    grep -q "removing ${packs[0]}: out of date" "$log" || fail "the out-of-date pack was not removed"
    [[ ! -e ${packs[0]} ]] || fail "the out-of-date pack is still there"
    now=("$tmp"/runs/.image-cache/*.pack)
    [[ ${#now[@]} == 1 ]] || fail "expected one pack after the change, found ${now[*]}"
    grep -q '"train_images": 25' "$tmp/runs/c/run.json" || fail "the third run did not train on the 25 pictures"
    ;;
  resume)
    draw "$tmp/pictures" 32 32 || fail "cannot draw the test pictures"
    "$worker" make-dataset --from "$tmp/pictures" --out "$tmp/set.pack" --image-size 32 >"$log" 2>&1 \
      || fail "make-dataset: exit code $?"
    # 32 pictures and their mirror images in global batches of 8: 8 steps per epoch, 2
    # epochs, a checkpoint every 3 steps; rank 0 is killed right after step 11.
    settings=(train --dataset images --data-dir "$tmp/set.pack" --mirror --batch-size 8 --epochs 2
              --checkpoint-every-steps 3 "${small[@]}")
    mpi "${settings[@]}" --out "$tmp/reference" || fail "the uninterrupted run: exit code $?"
    grep -q '"train_images": 64' "$tmp/reference/run.json" || fail "--mirror did not double the 32 pictures"
    mpi "${settings[@]}" --out "$tmp/run" --debug-crash-after-step 11 && fail "mpirun exited 0 although rank 0 was killed"
    [[ -e $tmp/run/checkpoints/ckpt-9.bin && ! -e $tmp/run/checkpoints/ckpt-12.bin ]] \
      || fail "expected the checkpoint of step 9 and none after the kill"
    mpi train --dataset images --data-dir "$tmp/set.pack" --resume "$tmp/run" || fail "resume: exit code $?"
    grep -qE "resuming at batch 8 epoch 2 step [1-7]/8" "$log" || fail "did not resume mid epoch 2"
    [[ $(state_crc "$tmp/run") == "$(state_crc "$tmp/reference")" ]] \
      || fail "final weights/optimizer state differ from the uninterrupted run"
    [[ $(rows_without_timing "$tmp/run") == "$(rows_without_timing "$tmp/reference")" ]] \
      || fail "epochs.csv differs from the uninterrupted run's"
    cmp -s "$tmp/run/samples/epoch_002.npy" "$tmp/reference/samples/epoch_002.npy" \
      || fail "epoch 2 samples differ from the uninterrupted run's"
    ;;
  generate)
    draw "$tmp/pictures" 16 64 || fail "cannot draw the test pictures"
    mpi train --dataset images --data-dir "$tmp/pictures" --batch-size 8 --max-steps 2 "${small[@]}" \
        --out "$tmp/runs/rgb" || fail "train: exit code $?"
    grep -q '"image_size": 64' "$tmp/runs/rgb/run.json" || fail "run.json lacks the image DCGAN's 64 px"
    python3 - "$tmp/runs/rgb/samples/epoch_001.png" 64 <<'EOF' || fail "the epoch's sample grid is not a colour grid"
import struct, sys
data = open(sys.argv[1], "rb").read()
width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
assert colour == 2 and depth == 8, (colour, depth)          # 8-bit RGB
assert width == 8 * 64 + 7 * 2 == height, (width, height)   # 8 x 8 tiles of 64 px, 2 px gaps
EOF
    "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$worker" generate --run "$tmp/runs/rgb" --count 6 \
        --seed 3 --out "$tmp/gen" >"$log" 2>&1 || fail "generate: exit code $?"
    python3 - "$tmp/gen" <<'EOF' || fail "generate's output is not 6 colour images of 64 px"
import struct, sys
folder = sys.argv[1]
header = open(folder + "/samples.npy", "rb").read(128).decode("latin1")
assert "'shape': (6, 3, 64, 64)" in header, header
for name in ("sample-00000.png", "grid.png"):
    data = open(f"{folder}/{name}", "rb").read()
    assert struct.unpack(">B", data[25:26])[0] == 2, name    # RGB
EOF
    "$worker" export --run "$tmp/runs/rgb" --format safetensors --out "$tmp/g.safetensors" >"$log" 2>&1 \
      || fail "export: exit code $?"
    grep -q '"image_size":"64"' "$tmp/g.safetensors" && grep -q '"channels":"3"' "$tmp/g.safetensors" \
      || fail "the exported file's metadata lacks the image DCGAN's size and channels"
    grep -q '"main.12.weight"' "$tmp/g.safetensors" || fail "the exported file lacks examples/dcgan's key main.12.weight"
    ;;
  refusals)
    draw "$tmp/pictures" 8 32 || fail "cannot draw the test pictures"
    "$worker" make-dataset --from "$tmp/pictures" --out "$tmp/set.pack" --image-size 32 >"$log" 2>&1 \
      || fail "make-dataset: exit code $?"
    refused() {  # refused MESSAGE ARGS...: exit 2, the message, no run folder
      local message=$1
      shift
      "$worker" train "$@" --out "$tmp/refused" >"$log" 2>&1
      local code=$?
      (( code == 2 )) || fail "train $*: exit code $code, not 2"
      grep -qF -- "$message" "$log" || fail "train $*: the message lacks: $message"
      [[ ! -e $tmp/refused/epochs.csv ]] || fail "train $*: trained although refused"
      rm -rf "$tmp/refused"
    }
    refused "--image-size 64, but $tmp/set.pack was packed with 32: leave --image-size out" \
      --dataset images --data-dir "$tmp/set.pack" --image-size 64 --max-steps 1
    refused "bad value '48'" --dataset images --data-dir "$tmp/set.pack" --image-size 48 --max-steps 1
    refused "--dropout: the image DCGAN's discriminator has no dropout" \
      --dataset images --data-dir "$tmp/set.pack" --dropout 0.3 --max-steps 1
    refused "--mirror applies to --dataset images" --dataset mnist --data-dir "$tmp" --mirror --max-steps 1
    refused "--dataset images has no default folder" --dataset images --max-steps 1
    mkdir -p "$tmp/empty/a" && echo "not a picture" >"$tmp/empty/a/notes.txt"
    refused "$tmp/empty" --dataset images --data-dir "$tmp/empty" --max-steps 1
    ;;
  judge)
    draw "$tmp/pictures" 40 32 || fail "cannot draw the test pictures"
    "$worker" make-dataset --from "$tmp/pictures" --out "$tmp/set.pack" --image-size 32 >"$log" 2>&1 \
      || fail "make-dataset: exit code $?"
    export XDG_CACHE_HOME=$tmp/cache  # the judge is cached here, not in the user's ~/.cache
    "$worker" train-judge --dataset images --data-dir "$tmp/set.pack" --epochs 3 >"$log" 2>&1 \
      || fail "train-judge: exit code $?"
    grep -q "judge of $tmp/set.pack: test accuracy" "$log" || fail "train-judge did not say the judge's accuracy"
    grep -q "cached: $tmp/cache/gantry/judge-images-" "$log" || fail "the judge was not cached"
    mpi train --dataset images --data-dir "$tmp/set.pack" --batch-size 8 --max-steps 2 "${small[@]/off/fast}" \
        --out "$tmp/run" || fail "train: exit code $?"
    grep -q "quality: scoring 64 samples per epoch with the judge $tmp/cache/gantry/judge-images-" "$log" \
      || fail "the run did not score with the judge"
    python3 - "$tmp/run/epochs.csv" <<'EOF' || fail "the epoch lacks the judge's scores"
import csv, sys
row = list(csv.DictReader(open(sys.argv[1])))[-1]
assert float(row["quality_fd"]) > 0 and float(row["quality_class_entropy"]) > 0, row
EOF
    "$worker" make-dataset --from "$tmp/pictures" --out "$tmp/unlabelled.pack" --image-size 32 --labels none \
        >"$log" 2>&1 || fail "make-dataset --labels none: exit code $?"
    "$worker" train-judge --dataset images --data-dir "$tmp/unlabelled.pack" >"$log" 2>&1
    (( $? == 2 )) || fail "train-judge on an unlabelled set did not exit 2"
    grep -q "has no labels" "$log" || fail "the refusal does not say the set has no labels"
    ;;
  emoji)
    emoji=${4:-}
    [[ -d $emoji/smileys-emotion ]] \
      || fail "no emoji set in '$emoji': run python3 scripts/emoji_images.py $emoji (bash scripts/test.sh does)"
    "$worker" make-dataset --from "$emoji" --out "$tmp/emoji.pack" --image-size 32 >"$log" 2>&1 \
      || fail "make-dataset: exit code $?"
    grep -q "3788 files seen: 3786 packed" "$log" || fail "make-dataset did not pack the 3,786 emoji"
    grep -q "3786 images of 3x32x32, 10 classes" "$log" || fail "the emoji set is not 10 classes of 3x32x32"
    mpi train --dataset images --data-dir "$tmp/emoji.pack" --mirror --augment color,translation,cutout \
        --batch-size 32 --max-steps 3 --ngf 16 --ndf 16 --quality fast --progress-seconds 1 --out "$tmp/run" \
      || fail "train: exit code $?"
    grep -q '"train_images": 7572' "$tmp/run/run.json" || fail "--mirror did not double the 3,786 emoji"
    python3 - "$tmp/run/epochs.csv" <<'EOF' || fail "the epoch was not scored (quality_fd and quality_kid)"
import csv, math, sys
row = list(csv.DictReader(open(sys.argv[1])))[-1]
assert float(row["quality_fd"]) > 0 and math.isfinite(float(row["quality_kid"])), row
EOF
    ;;
  *) echo "usage: $0 MPIEXEC WORKER cache|resume|generate|refusals|judge|emoji [EMOJI_DIR]" >&2; exit 2 ;;
esac
echo PASS
