#!/usr/bin/env bash
# gantry-worker make-dataset end to end: a folder of every kind of image and of files to
# skip (tests/images/make_test_images_main.cc, plus a FIFO, a link loop, a dangling link
# and names that are not UTF-8) packed, the report read, and every exit code. Usage:
#   make_dataset_e2e.sh WORKER MAKE_TEST_IMAGES
# Exit 0: pass; anything else: fail, with the reason.
set -uo pipefail
worker=$1 make_images=$2
dir=$(mktemp -d)
log=$dir/log
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$log"; exit 1; }
expect_in_log() { grep -qF -- "$1" "$log" || fail "no '$1' in the output"; }
# No temporary file of make-dataset is left anywhere under the scratch folder.
no_leftovers() { ! find "$dir" -name '*.tmp.*' | grep -q . || fail "a temporary file was left: $(find "$dir" -name '*.tmp.*')"; }

"$make_images" "$dir/img" >"$log" 2>&1 || fail "gantry-make-test-images failed"
cp "$dir/img/cats/rgba.png" "$dir/img/dogs/caf"$'\xe9'".png"   # packed: a Latin-1 name
printf 'text' >"$dir/img/dogs/bad"$'\xff\x1b'".txt"              # skipped: not UTF-8, an ESC
mkfifo "$dir/img/dogs/fifo.png"
ln -s .. "$dir/img/dogs/loop"
ln -s nowhere.png "$dir/img/cats/dangling.png"

# 1. Pack: 7 images, 9 files skipped with their reasons, the counts, the file written.
"$worker" make-dataset --from "$dir/img" --out "$dir/set.gpk" --image-size 32 --progress-seconds 0.1 >"$log" 2>&1 \
  || fail "make-dataset exited $?"
expect_in_log "skipped cats/notes.txt: not an image"
expect_in_log "skipped cats/dangling.png: unreadable: a symbolic link to nothing"
expect_in_log "skipped dogs/bomb.png: decompression bomb: a PNG of 100000x100000"
expect_in_log "skipped dogs/cut.png: truncated"
expect_in_log "skipped dogs/tiny.png: too small"
expect_in_log "skipped dogs/fifo.png: not a regular file: a FIFO"
expect_in_log "skipped dogs/loop: link loop"
expect_in_log "skipped top.png: not in a class folder"
expect_in_log 'skipped dogs/bad\xff\e.txt: not an image'   # escaped, never raw
grep -q $'\x1b' "$log" && fail "a raw ESC reached the terminal"
expect_in_log "16 files seen: 7 packed"
expect_in_log "9 skipped (decompression bomb 1, link loop 1, not a regular file 1, not an image 2, not in a class folder 1, too small 1, truncated 1, unreadable 1)"
expect_in_log "2 classes"
[[ $(head -c 8 "$dir/set.gpk") == GANTRYPK ]] || fail "set.gpk does not start with GANTRYPK"
# 128 + 7 records of 3x32x32 (3072 bytes, 64-aligned) + 7 index entries + strings.
size=$(stat -c %s "$dir/set.gpk")
((size > 128 + 7 * 3072 + 7 * 16)) || fail "set.gpk has $size bytes"
no_leftovers

# 2. Refusals: exit 2, nothing written, nothing touched.
expect_refusal() {  # MESSAGE ARGS...
  local message=$1; shift
  "$worker" make-dataset "$@" >"$log" 2>&1
  local code=$?
  [[ $code == 2 ]] || fail "make-dataset $* exited $code, expected 2"
  expect_in_log "$message"
}
sum=$(md5sum <"$dir/set.gpk")
expect_refusal "--out $dir/set.gpk: exists" --from "$dir/img" --out "$dir/set.gpk" --image-size 32
[[ $(md5sum <"$dir/set.gpk") == "$sum" ]] || fail "an existing --out was written over"
expect_refusal "--strict: 9 of 16 files skipped (listed above); nothing written" \
  --from "$dir/img" --out "$dir/strict.gpk" --image-size 32 --strict
expect_in_log "skipped dogs/cut.png: truncated"
[[ ! -e $dir/strict.gpk ]] || fail "--strict wrote a file"
mkdir -p "$dir/empty/class"
expect_refusal "--from $dir/empty: no image to pack" --from "$dir/empty" --out "$dir/e.gpk" --image-size 32
expect_refusal "--labels none" --from "$dir/img/cats" --out "$dir/e.gpk" --image-size 32
expect_refusal "--from $dir/missing: No such file" --from "$dir/missing" --out "$dir/e.gpk" --image-size 32
expect_refusal "--image-size: bad value '4' (an integer in [8, 1024])" --from "$dir/img" --out "$dir/e.gpk" --image-size 4
expect_refusal "--image-size is required" --from "$dir/img" --out "$dir/e.gpk"
expect_refusal "--channels 2: must be 1 (luma) or 3 (RGB)" --from "$dir/img" --out "$dir/e.gpk" --image-size 32 --channels 2
expect_refusal "--fit 'zoom': use crop, pad or stretch" --from "$dir/img" --out "$dir/e.gpk" --image-size 32 --fit zoom
expect_refusal "--alpha 'gray'" --from "$dir/img" --out "$dir/e.gpk" --image-size 32 --alpha gray
expect_refusal "--max-pixels: bad value '10'" --from "$dir/img" --out "$dir/e.gpk" --image-size 32 --max-pixels 10
expect_refusal "--out $dir/no/e.gpk: $dir/no is not a folder" --from "$dir/img" --out "$dir/no/e.gpk" --image-size 32
[[ ! -e $dir/e.gpk ]] || fail "a refused command wrote a file"
# A flat folder packs with --labels none; --max-pixels skips what is larger.
"$worker" make-dataset --from "$dir/img/cats" --out "$dir/flat.gpk" --image-size 16 --labels none --fit pad \
  --alpha keep --channels 1 --max-pixels 4000 >"$log" 2>&1 || fail "--labels none exited $?"
expect_in_log "skipped baseline.jpg: decompression bomb: a JPEG of 80x80 (6400 pixels) is more than the 4000"
expect_in_log "2 packed"
expect_in_log "2x16x16"
no_leftovers

# 3. A write that fails (a file size limit, as a full disk would): exit 1, nothing left.
(ulimit -f 16; "$worker" make-dataset --from "$dir/img" --out "$dir/big.gpk" --image-size 256 >"$log" 2>&1)
code=$?
[[ $code == 1 ]] || fail "a failed write exited $code, expected 1"
expect_in_log "big.gpk.tmp"
[[ ! -e $dir/big.gpk ]] || fail "a failed write published big.gpk"
no_leftovers

# 4. SIGINT while packing: exit 130, the temporary file removed. 2000 links to one JPEG
# scaled up to 1024 take long enough to be interrupted.
mkdir -p "$dir/many/c"
for i in $(seq 1 2000); do ln "$dir/img/cats/baseline.jpg" "$dir/many/c/$i.jpg"; done
"$worker" make-dataset --from "$dir/many" --out "$dir/many.gpk" --image-size 1024 --progress-seconds 0.1 >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q "files seen" "$log" && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
code=$?
[[ $code == 130 ]] || fail "make-dataset stopped by SIGINT exited $code, expected 130"
expect_in_log "stopped after"
[[ ! -e $dir/many.gpk ]] || fail "an interrupted pack published many.gpk"
no_leftovers
echo "PASS"
