#!/usr/bin/env bash
# A hostile probe of gantry-worker (issue 29): a few hundred bad inputs of each class,
# each under a timeout, and a count per class of what happened. Run by hand (it takes
# tens of minutes on two cores), not as a CTest:
#
#   bash tests/probe/worker_probe.sh [BUILD_DIR] [CLASS...]     BUILD_DIR: build (default)
#   CLASS: numbers | entries | outputs | inputs | resume | coordinators | concurrent |
#          signals (default: all eight)
#   PROBE_TIMEOUT=60 (seconds per run), PROBE_KEEP=1 (keep the scratch folder)
#
# Classes:
#   numbers  every numeric flag of every subcommand with values that are huge, negative,
#            NaN, inf, 1e400, past int32/int64, hexadecimal, or not numbers at all;
#   entries  a run folder's entries replaced by what their names do not say (link loops,
#            dangling links, links to a user's file, 100 GB sparse files, folders, FIFOs)
#            under inspect-checkpoint, train --resume, rollout, generate and export;
#   outputs  outputs that exist already (make-flow, rollout, generate, export, train);
#   inputs   bad flow.json, .npy and IDX files (the fuzz corpora, and files that are not
#            regular files) under rollout, generate and train;
#   resume   train --resume with the run's settings changed: each of the settings issue 45
#            edited in run.json (and more), and the same as flags; each must be refused
#            naming the setting (the checkpoint's record is the truth), the run and its
#            checkpoints untouched. Repeating a recorded value or its default must run.
#   coordinators, concurrent, signals: processes against each other (issue 45): two
#            coordinators on one database, two writers to one output of each kind,
#            SIGTERM/SIGINT during every job kind, standalone and in a pool; their
#            verdicts are described in tests/probe/process_probe.sh, which defines them.
# numbers also gives generate's --seed, --count and --interpolate to gantry-worker and
# to the gantry CLI (parsed before any connection) values that must not wrap or clamp.
# Each run is counted once:
#   refused   exit 2 (or 1, the documented code of a failure while running) with a
#             message naming the thing (the flag, or the path);
#   ran       exit 0 (the input was harmless there: an entry the command never reads);
#   other     any other clean exit (wrong code, or a message that names nothing);
#   crashed   killed by a signal or exit >= 128 (an abort, a segfault);
#   hung      still running at the timeout;
#   changed   a file of the user's was altered (checksums before and after).
# Exit 0 when nothing crashed, hung or changed (and nothing counted "other"), else 1.
# The details of every run that is not "refused" or "ran" go to PROBE_LOG
# (/tmp/worker_probe.log unless set).
set -uo pipefail

build=${1:-build}
shift || true
classes=("$@")
((${#classes[@]})) || classes=(numbers entries outputs inputs resume coordinators concurrent signals)
here=$(cd "$(dirname "$0")/../.." && pwd)
worker=$(cd "$build" 2>/dev/null && pwd)/bin/gantry-worker
[[ -x $worker ]] || { echo "no gantry-worker in $build/bin (build it first)"; exit 2; }
gantry_cli=$(cd "$build" 2>/dev/null && pwd)/bin/gantry
timeout_s=${PROBE_TIMEOUT:-60}
scratch=$(mktemp -d /tmp/worker_probe.XXXXXX)
[[ ${PROBE_KEEP:-0} == 1 ]] || trap 'rm -rf "$scratch"' EXIT
log=${PROBE_LOG:-/tmp/worker_probe.log}
: >"$log"
declare -A count
user_files=()

note() { echo "$*" >>"$log"; }

# The checksum of a user's file (or of what a path is, when it is not a regular file).
digest() {
  local p=$1
  if [[ -L $p ]]; then echo "link:$(readlink "$p")"
  elif [[ -p $p ]]; then echo fifo
  elif [[ -d $p ]]; then (cd "$p" && find . -printf '%p %i %s %T@\n' | sort | md5sum)  # a rename or a write shows
  elif [[ -f $p ]]; then md5sum <"$p"
  else echo missing; fi
}

# probe CLASS NAME CMD...: runs CMD under the timeout; NAME is what a refusal must name.
# user_files (set by the caller) are checked before and after.
probe() {
  local class=$1 name=$2
  shift 2
  local -a before=()
  local f
  for f in "${user_files[@]}"; do before+=("$(digest "$f")"); done
  local out rc
  out=$(cd "$scratch" && timeout -s TERM -k 5 "$timeout_s" "$@" </dev/null 2>&1)
  rc=$?
  local verdict
  if ((rc == 124 || rc == 137)); then verdict=hung  # timeout's TERM, then its KILL
  elif ((rc >= 128)); then verdict=crashed
  elif ((rc == 0)); then verdict=ran
  elif ((rc == 1 || rc == 2)) && [[ $out == *"$name"* ]]; then verdict=refused
  else verdict=other; fi
  local i=0
  for f in "${user_files[@]}"; do
    [[ $(digest "$f") == "${before[$i]}" ]] || verdict=changed
    i=$((i + 1))
  done
  count[$class,$verdict]=$((${count[$class,$verdict]:-0} + 1))
  if [[ $verdict != refused && $verdict != ran ]]; then
    note "[$class] $verdict (exit $rc): $* :: expected a message naming '$name'"
    note "    ${out:0:600}"
  fi
}

fixtures() {
  echo "making the fixtures in $scratch ..."
  python3 "$here/tests/testing/tiny_mnist.py" "$scratch/mnist"
  "$worker" train --dataset mnist --data-dir "$scratch/mnist" --batch-size 16 --max-steps 2 --quality off \
    --keep-checkpoints 1 --out "$scratch/run" >"$scratch/fixture.log" 2>&1 || { cat "$scratch/fixture.log"; exit 2; }
  "$worker" make-flow --out "$scratch/case" --nx 64 --ny 32 --frames 12 --warmup-periods 0.5 \
    >>"$scratch/fixture.log" 2>&1 || { cat "$scratch/fixture.log"; exit 2; }
  "$worker" train --model pix2pix --dataset flow --data-dir "$scratch/case" --image-size 32 --ngf 4 --ndf 4 \
    --batch-size 2 --max-steps 1 --quality off --keep-checkpoints 1 --out "$scratch/p2p" \
    >>"$scratch/fixture.log" 2>&1 || { cat "$scratch/fixture.log"; exit 2; }
  echo "the user's own file, never to be changed" >"$scratch/users-file"
  user_files=("$scratch/users-file" "$scratch/run/checkpoints" "$scratch/case" "$scratch/p2p/checkpoints")
}

# A fresh copy of a run folder: small files copied, checkpoints hard-linked (they are only
# ever replaced by a rename, never written in place).
copy_run() {
  local from=$1 to=$2 entry
  rm -rf "$to"
  mkdir -p "$to/checkpoints"
  for entry in "$from"/*; do
    [[ $(basename "$entry") == checkpoints ]] || cp -a "$entry" "$to/"
  done
  for entry in "$from"/checkpoints/*; do ln "$entry" "$to/checkpoints/"; done
}

# ---------------------------------------------------------------------------- numbers
bad_numbers=(2147483648 4294967296 2147483647 -2147483649 9223372036854775808 -9223372036854775809
             99999999999999999999999 -1 nan NaN inf -inf 1e400 -1e400 1e308 -1e308 abc "" 0x10 1,5 " 7" 1e 1.5)

# bad_pairs SUBCOMMAND: "FLAG<TAB>VALUE" for each numeric flag of the subcommand's --help
# (each states its range, "[an integer in [1, 10000]]") and eight values outside that
# range, a different eight for each flag; values the range accepts are left out, so
# every run must be a refusal.
bad_pairs() {
  "$worker" "$1" --help | BAD="$(printf '%s\n' "${bad_numbers[@]}")" python3 -c '
import math, os, re, sys
values = os.environ["BAD"].split("\n")
flag_pattern = re.compile(r"^\s+(--[a-z0-9-]+)")
range_pattern = re.compile(r"\[(?:dynamic, none, or )?(an integer|integers|a number|a power of two) in "
                           r"([\[(])([^,]+), ([^\])]+)([\])])[^\[]*\]\s*$")
def valid(kind, lo, lo_open, hi, hi_open, v):
    if kind == "integers":
        return v != "" and all(valid("an integer", lo, lo_open, hi, hi_open, p) for p in v.split(","))
    if kind in ("an integer", "a power of two"):
        if not re.fullmatch(r"[+-]?[0-9]+", v): return False
        x = int(v)
    else:
        if not re.fullmatch(r"[0-9.eE+-]+", v): return False
        try: x = float(v)
        except ValueError: return False
        if not math.isfinite(x): return False
    lo, hi = float(lo), float(hi)
    return (x > lo if lo_open else x >= lo) and (x < hi if hi_open else x <= hi)
n, flag, seen = 0, None, set()
for line in sys.stdin:  # a long flag name puts its help on the next line
    f = flag_pattern.match(line)
    if f: flag = f.group(1)
    m = range_pattern.search(line)
    if not m or flag is None or flag in seen: continue
    seen.add(flag)
    kind, lb, lo, hi, hb = m.groups()
    bad = [v for v in values if not valid(kind, lo, lb == "(", hi, hb == ")", v)]
    for j in range(8):
        print(flag + "\t" + bad[(3 * n + j) % len(bad)])
    n += 1
'
}

numbers() {
  echo "numbers ..."
  local flag v sub
  local -A cmd=(
    [train]="train --dataset mnist --data-dir $scratch/mnist --batch-size 16 --max-steps 1 --quality off --out $scratch/n/t"
    [make-flow]="make-flow --out $scratch/n/flow"
    [rollout]="rollout --run $scratch/p2p --case $scratch/case --steps 2 --out $scratch/n/roll"
    [generate]="generate --run $scratch/run --out $scratch/n/gen --count 2"
    [export]="export --run $scratch/run --format safetensors --out $scratch/n/g.st"
    [serve]="serve --coordinator 127.0.0.1:1"
    [train-judge]="train-judge --data-dir $scratch/mnist")
  for sub in "${!cmd[@]}"; do
    local pairs=0
    while IFS=$'\t' read -r flag v; do
      # shellcheck disable=SC2086
      probe numbers "$flag" "$worker" ${cmd[$sub]} "$flag" "$v" </dev/null
      rm -rf "$scratch/n"
      pairs=$((pairs + 1))
    done < <(bad_pairs "$sub")
    ((pairs > 0)) || { echo "no numeric flags found in $sub --help"; exit 2; }
  done
  generate_numbers
}

# generate's numbers that once wrapped, clamped or overflowed (issue 45, item 7): each must
# be refused quoting the value typed, by gantry-worker generate and by the gantry CLI.
generate_numbers() {
  local v
  for v in -1 18446744073709551616 1e23 -0 +1 " 1" 0x1 99999999999999999999999; do
    probe numbers "--seed: bad value '$v'" "$worker" generate --run "$scratch/run" --out "$scratch/n/gen" --count 2 \
      --seed "$v"
    [[ -x $gantry_cli ]] && probe numbers "--seed: bad value '$v'" "$gantry_cli" generate job-1 --count 2 --seed "$v"
  done
  for v in 9223372036854775807 9223372036854775808 99999999999999999999 1e30 100001; do
    probe numbers "--count: bad value '$v'" "$worker" generate --run "$scratch/run" --out "$scratch/n/gen" --count "$v"
    [[ -x $gantry_cli ]] && probe numbers "--count: bad value '$v'" "$gantry_cli" generate job-1 --count "$v"
  done
  for v in 0,9223372036854775807 9223372036854775807,0 0,9223372036854775808 -1,2 0,100000 1e3,2; do
    probe numbers "--interpolate" "$worker" generate --run "$scratch/run" --out "$scratch/n/gen" --interpolate "$v" \
      --steps 3
  done
  rm -rf "$scratch/n"
}

# ---------------------------------------------------------------------------- entries
# plant KIND PATH: puts a KIND where PATH is (removing what was there).
plant() {
  local kind=$1 p=$2
  rm -rf "$p"
  mkdir -p "$(dirname "$p")"
  case $kind in
    loop) ln -s "$p" "$p" ;;
    dangling) ln -s "$p.nowhere" "$p" ;;
    userlink) ln -s "$scratch/users-file" "$p" ;;
    sparse) : >"$p" && truncate -s 100G "$p" ;;
    folder) mkdir -p "$p/inside" ;;
    fifo) mkfifo "$p" ;;
    empty) : >"$p" ;;
    garbage) head -c 4096 /dev/urandom >"$p" ;;
  esac
}

entries() {
  echo "entries ..."
  local kind name sub r
  local step
  step=$(basename "$(ls "$scratch/run/checkpoints" | head -1)" .bin)
  step=${step#ckpt-}
  local names=(run.json epochs.csv log.txt stragglers.csv timing.md checkpoints "checkpoints/ckpt-$step.bin"
               checkpoints/ckpt-9999.bin samples)
  for kind in loop dangling userlink sparse folder fifo empty garbage; do
    for name in "${names[@]}"; do
      for sub in inspect inspect-file resume generate export rollout; do
        local src=$scratch/run
        [[ $sub == rollout ]] && src=$scratch/p2p
        r=$scratch/e/run
        copy_run "$src" "$r"
        local pname=$name own
        own=$(ls "$src/checkpoints" | head -1)  # the source run's own checkpoint, ckpt-N.bin
        [[ $name == "checkpoints/ckpt-$step.bin" ]] && pname=checkpoints/$own
        plant "$kind" "$r/$pname"
        case $sub in
          inspect) probe entries "$r" "$worker" inspect-checkpoint "$r" ;;
          inspect-file) probe entries "$r/$pname" "$worker" inspect-checkpoint "$r/$pname" ;;
          resume) probe entries "$r" "$worker" train --resume "$r" ;;
          generate) probe entries "$r" "$worker" generate --run "$r" --count 2 --out "$scratch/e/gen" ;;
          export) probe entries "$r" "$worker" export --run "$r" --format safetensors --out "$scratch/e/g.st" ;;
          rollout) probe entries "$r" "$worker" rollout --run "$r" --case "$scratch/case" --steps 2 \
                     --out "$scratch/e/roll" ;;
        esac
        rm -rf "$scratch/e"
      done
    done
  done
}

# ---------------------------------------------------------------------------- outputs
outputs() {
  echo "outputs ..."
  local kind name sub
  local names=(frames.npy flow.json notes.txt rollout.csv grid.png epochs.csv)
  for kind in file userlink fifo folder dangling; do
    for name in "${names[@]}"; do
      for sub in make-flow make-flow-cases rollout rollout-default generate export train; do
        local out=$scratch/o/out
        rm -rf "$scratch/o" && mkdir -p "$out"
        local target=$out/$name
        [[ $sub == make-flow-cases ]] && target=$out/case-000/$name
        [[ $sub == export ]] && target=$out
        if [[ $sub == rollout-default ]]; then
          copy_run "$scratch/p2p" "$scratch/o/p2p"
          target=$scratch/o/p2p/rollout-case/$name
        fi
        if [[ $sub == export ]]; then
          rm -rf "$out"
          case $kind in file) echo "the user's" >"$out" ;; *) plant "$kind" "$out" ;; esac
        else
          case $kind in file) mkdir -p "$(dirname "$target")" && echo "the user's" >"$target" ;;
                        *) plant "$kind" "$target" ;; esac
        fi
        user_files+=("$target")
        case $sub in
          make-flow) probe outputs "$out" "$worker" make-flow --out "$out" --nx 64 --ny 32 --frames 4 \
                       --warmup-periods 0.1 ;;
          make-flow-cases)
            printf -- '- {re: 90}\n' >"$scratch/o/cases.yaml"
            probe outputs "$out/case-000" "$worker" make-flow --out "$out" --cases "$scratch/o/cases.yaml" \
              --nx 64 --ny 32 --frames 4 --warmup-periods 0.1 ;;
          rollout) probe outputs "$out" "$worker" rollout --run "$scratch/p2p" --case "$scratch/case" --steps 2 \
                     --out "$out" ;;
          rollout-default)
            probe outputs "rollout-case" "$worker" rollout --run "$scratch/o/p2p" --case "$scratch/case" --steps 2 ;;
          generate) probe outputs "$out" "$worker" generate --run "$scratch/run" --count 2 --out "$out" ;;
          export) probe outputs "$out" "$worker" export --run "$scratch/run" --format safetensors --out "$out" ;;
          train) probe outputs "$out" "$worker" train --dataset mnist --data-dir "$scratch/mnist" --batch-size 16 \
                   --max-steps 1 --quality off --out "$out" ;;
        esac
        unset 'user_files[-1]'
      done
    done
  done
}

# ---------------------------------------------------------------------------- inputs
inputs() {
  echo "inputs ..."
  local f c sub
  local corpus=$here/tests/fuzz/corpus
  local -a jsons=("$corpus"/flow_case/*)
  for f in "${jsons[@]}" loop fifo folder sparse; do
    for sub in rollout generate train; do
      c=$scratch/i/case
      rm -rf "$scratch/i" && mkdir -p "$c"
      cp "$scratch/case/frames.npy" "$scratch/case/mask.npy" "$c/"
      if [[ -f $f ]]; then cp "$f" "$c/flow.json"; else plant "$f" "$c/flow.json"; fi
      flow_probe "$sub" "$c" "flow.json"
    done
  done
  for f in "$corpus"/npy/* loop fifo folder sparse garbage empty; do
    for which in frames.npy mask.npy; do
      for sub in rollout generate train; do
        c=$scratch/i/case
        rm -rf "$scratch/i" && mkdir -p "$c"
        cp "$scratch/case/"* "$c/"
        if [[ -f $f ]]; then cp "$f" "$c/$which"; else plant "$f" "$c/$which"; fi
        flow_probe "$sub" "$c" "$which"
      done
    done
  done
  for f in "$corpus"/idx_reader/* loop fifo folder sparse garbage empty; do
    for which in train-images-idx3-ubyte train-labels-idx1-ubyte; do
      local d=$scratch/i/mnist
      rm -rf "$scratch/i" && mkdir -p "$d"
      cp "$scratch/mnist/"* "$d/"
      if [[ -f $f ]]; then
        # The corpus's first byte is the target's mode: bit 0 gzips the rest.
        local mode
        mode=$(head -c 1 "$f" | od -An -tu1 | tr -d ' ')
        if ((mode & 1)); then tail -c +2 "$f" | gzip -c >"$d/$which"; else tail -c +2 "$f" >"$d/$which"; fi
      else
        plant "$f" "$d/$which"
      fi
      probe inputs "$which" "$worker" train --dataset mnist --data-dir "$d" --batch-size 2 --max-steps 1 \
        --quality off --out "$scratch/i/run"
    done
  done
}

flow_probe() {
  local sub=$1 c=$2 which=$3
  case $sub in
    rollout) probe inputs "$which" "$worker" rollout --run "$scratch/p2p" --case "$c" --steps 2 --out "$scratch/i/r" ;;
    generate)
      probe inputs "$which" "$worker" generate --run "$scratch/p2p" --case "$c" --count 1 --out "$scratch/i/g" ;;
    train) probe inputs "$which" "$worker" train --model pix2pix --dataset flow --data-dir "$c" --image-size 32 \
             --ngf 4 --ndf 4 --batch-size 2 --max-steps 1 --quality off --out "$scratch/i/t" ;;
  esac
}

# ---------------------------------------------------------------------------- resume
# A finished run's settings changed on resume (issue 45, items 4-6): by hand in run.json
# (the checkpoint's record must catch it) and as flags. Each change must be refused naming
# the setting; a repeated value (or its default) must run.
resume() {
  echo "resume ..."
  local pair name value r
  local edits=("lr 0.001" "lr-scaling linear" "lr-scaling sqrt" "base-batch-size 32" "base-batch-size 128"
               "warmup-steps 10" "warmup-start 0.5" "d-lr-ratio 2" "d-lr-ratio 0.5" "g-ema 0.999"
               "target-fd 50" "stop-at-target true" "epochs 0" "quality fast" "quality full" "seed 7"
               "batch-size 32" "optimizer sgd" "beta1 0.9" "max-steps 1" "limit-images 32" "precision bf16"
               "augment color")
  for pair in "${edits[@]}"; do
    read -r name value <<<"$pair"
    r=$scratch/r/run
    copy_run "$scratch/run" "$r"
    python3 -c 'import json, sys
path, name, value = sys.argv[1:]
j = json.load(open(path))
j["settings"][name] = value
json.dump(j, open(path, "w"), indent=2)' "$r/run.json" "$name" "$value"
    # A setting the checkpoint's own fields hold (the sweep) is refused by that check,
    # which names it in words.
    local says=$name
    [[ $name == batch-size ]] && says="batch size"
    probe resume "$says" "$worker" train --resume "$r"
    r=$scratch/r/flag
    copy_run "$scratch/run" "$r"
    if [[ $value == true ]]; then  # a switch takes no value on the command line
      probe resume "--$name" "$worker" train --resume "$r" "--$name"
    else
      probe resume "--$name" "$worker" train --resume "$r" "--$name" "$value"
    fi
    rm -rf "$scratch/r"
  done
  # The recorded value, or the default the run used, is no change (issue 45, item 6).
  for pair in "base-batch-size 64" "lr 1e-4" "lr 0.0001" "quality off" "batch-size 16" "lr-scaling none" \
              "d-lr-ratio 1" "max-steps 2"; do
    read -r name value <<<"$pair"
    r=$scratch/r/same
    copy_run "$scratch/run" "$r"
    probe resume "--$name" "$worker" train --resume "$r" "--$name" "$value"
    rm -rf "$scratch/r"
  done
}

# shellcheck source=tests/probe/process_probe.sh
source "$here/tests/probe/process_probe.sh"

fixtures
for class in "${classes[@]}"; do "$class"; done

status=0
printf '\n%-12s %8s %8s %8s %8s %8s %8s\n' class refused ran other crashed hung changed
for class in "${classes[@]}"; do
  printf '%-12s' "$class"
  for v in refused ran other crashed hung changed; do
    n=${count[$class,$v]:-0}
    printf ' %8d' "$n"
    [[ $v == refused || $v == ran ]] || ((n == 0)) || status=1
  done
  echo
done
echo "details of every run not refused or ran: $log"
[[ ${PROBE_KEEP:-0} == 1 ]] && echo "scratch kept: $scratch"
exit $status
