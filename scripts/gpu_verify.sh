#!/usr/bin/env bash
# Every GPU figure the GPU issue asks for, in one command, on an NVIDIA H100/H200 machine:
#
#   bash scripts/gpu_verify.sh            # from the repository root (or anywhere: it cds there)
#   bash scripts/gpu_verify.sh --skip-build   # measure with the build-gpu/ already there
#   bash scripts/gpu_verify.sh --bundle DIR   # on a machine without Debian's packages: run
#                                             # the binaries of scripts/gpu_bundle.sh's DIR
#
# With --bundle nothing is built: DIR/env.sh puts the bundled binaries on PATH, the GPU
# tests run as gantry_gpu_tests (op suite first, through --gtest_filter) and
# tests/gpu/gpu_worker_e2e.sh directly (ctest's files
# name the build machine's paths), and the PyTorch port runs outside the bundle's
# libraries (gantry_bundle_clean).
#
# 1. builds gantry with CUDA into build-gpu/ (Release, sm_90), installing the Debian
#    packages first (scripts/install_deps.sh) only if cmake, the gRPC headers or mpirun
#    are missing; a failed build stops the script (there is nothing to measure);
# 2. the GPU tests: first the CUDA backend op suite (ctest -L gpu -R BackendOps: every
#    Backend op against the reference, the quickest sign a kernel is wrong), then the rest
#    of ctest -L gpu (device tensors, training, nccl_allreduce_np2, gpu_worker_*);
# 3. nvidia-smi: GPU names, driver, memory;
# 4. gantry-bench-step --device cuda, fp32 and bf16, batches 64..512;
# 5. the PyTorch yardstick bench/torch/dcgan_torch.py at the same settings (skipped, not
#    failed, when no interpreter has torch with CUDA);
# 6. gantry-bench-nccl on the gradient buffer (2,518,337 values), fp32 and
#    bf16, under mpirun with one rank per GPU (skipped with one GPU: NCCL needs a GPU per
#    rank, and busbw across ranks needs at least two).
#
# Each step after the build is logged to gpu_results/<step>.log and recorded in
# gpu_results/summary.md as PASS, FAIL or SKIP; a failure does not stop the later steps.
# The summary is printed at the end. Exit status: 0 when no step failed, 1 otherwise.
#
# Environment: GANTRY_GPU_OUT (results folder, default gpu_results), GANTRY_GPU_WARMUP /
# GANTRY_GPU_STEPS (warm-up and timed steps for both DCGAN benchmarks, default 10 / 100),
# GANTRY_GPU_BATCHES (default 64,128,256,512), GANTRY_GPU_STEP_TIMEOUT (seconds per step,
# default 1800), TORCH_PYTHON (an interpreter to use for the PyTorch port).
set -euo pipefail
cd "$(dirname "$0")/.."

SKIP_BUILD=0
BUNDLE=""
while (($#)); do
  arg=$1
  shift
  case $arg in
    --skip-build) SKIP_BUILD=1 ;;
    --bundle) BUNDLE=${1:?--bundle needs the bundle folder}; shift; SKIP_BUILD=1 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "gpu_verify: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -n $BUNDLE ]]; then
  # shellcheck disable=SC1091
  source "$BUNDLE/env.sh" || { echo "gpu_verify: $BUNDLE/env.sh failed (see above)" >&2; exit 1; }
  bin() { command -v "$1"; }
  # Python with torch must not load the bundle's libstdc++, libz... first.
  outside_bundle=(env "LD_LIBRARY_PATH=${GANTRY_BUNDLE_OLD_LD_LIBRARY_PATH:-}")
else
  bin() { echo "build-gpu/bin/$1"; }
  outside_bundle=()
fi

OUT=${GANTRY_GPU_OUT:-gpu_results}
BUILD=build-gpu
BATCHES=${GANTRY_GPU_BATCHES:-64,128,256,512}
WARMUP=${GANTRY_GPU_WARMUP:-10}
STEPS=${GANTRY_GPU_STEPS:-100}
STEP_TIMEOUT=${GANTRY_GPU_STEP_TIMEOUT:-1800}
GRAD_VALUES=2518337   # G 2,305,472 + D 212,865 parameters (bench/torch/dcgan_model.py)

mkdir -p "$OUT"
rm -f "$OUT"/*.log "$OUT"/*.jsonl "$OUT/summary.md"

STEP_NAMES=()
STEP_STATUS=()
STEP_NOTES=()
any_fail=0

record() {  # name status note
  STEP_NAMES+=("$1")
  STEP_STATUS+=("$2")
  STEP_NOTES+=("$3")
  if [[ $2 == FAIL ]]; then any_fail=1; fi
  echo "== $1: $2${3:+ ($3)}"
}

# run_step NAME COMMAND...: runs COMMAND with a time limit, output to the terminal and
# to $OUT/NAME.log; records PASS or FAIL (with the exit status); returns the status.
run_step() {
  local name=$1 log="$OUT/$1.log" rc
  shift
  echo
  echo "== $name: $*"
  printf '$ %s\n' "$*" >"$log"
  set +e
  timeout --kill-after=30 "$STEP_TIMEOUT" "$@" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  set -e
  if ((rc == 0)); then
    record "$name" PASS ""
  elif ((rc == 77)); then  # the tests' "skipped" status
    record "$name" SKIP "$(grep -m1 '^SKIP' "$log" || echo "exit status 77")"
  elif ((rc == 124 || rc == 137)); then
    record "$name" FAIL "timed out after ${STEP_TIMEOUT}s"
  else
    record "$name" FAIL "exit status $rc"
  fi
  return "$rc"
}

skip_step() {  # name reason: records SKIP and leaves the reason in the step's log
  echo
  printf 'SKIPPED: %s\n' "$2" | tee "$OUT/$1.log"
  record "$1" SKIP "$2"
}

# table_col FILE COLUMN: "batch value" for each row of the first table in FILE whose
# header line starts with "batch" and has COLUMN (the tables of gantry-bench-step and
# dcgan_torch.py). Columns are found by name, so added columns do not break it.
table_col() {
  [[ -f $1 ]] || return 0
  awk -v col="$2" '
    !c && $1 == "batch" { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
    c && $1 ~ /^[0-9]+$/ && NF >= c { print $1, $c }
  ' "$1"
}

# ------------------------------------------------------------------ 0. what this is
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(hostname)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree has changes)')"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
  echo "cmake: $(cmake --version 2>/dev/null | head -1 || echo missing)"
  nvcc_bin=$(command -v nvcc || { [[ -x /usr/local/cuda/bin/nvcc ]] && echo /usr/local/cuda/bin/nvcc; } || true)
  echo "nvcc: ${nvcc_bin:-missing} $([[ -n $nvcc_bin ]] && "$nvcc_bin" --version | grep -i release || true)"
  echo "mpirun: $(mpirun --version 2>/dev/null | head -1 || echo missing)"
} >"$OUT/environment.log" 2>&1 || true
cat "$OUT/environment.log"

# ------------------------------------------------------------------ 1. dependencies and build
need_deps=()
if ((SKIP_BUILD)); then
  : # nothing is built: no packages needed
else
command -v cmake >/dev/null || need_deps+=(cmake)
[[ -f /usr/include/grpcpp/grpcpp.h ]] || need_deps+=("gRPC headers")
command -v mpirun >/dev/null || need_deps+=(mpirun)
if ((${#need_deps[@]})); then
  run_step deps bash scripts/install_deps.sh || true
  [[ ${STEP_STATUS[-1]} == PASS ]] || echo "install_deps failed; trying the build anyway"
  STEP_NOTES[-1]="missing before: ${need_deps[*]}${STEP_NOTES[-1]:+; ${STEP_NOTES[-1]}}"
else
  record deps PASS "cmake, gRPC headers and mpirun present; install_deps not run"
fi
fi

write_summary() {
  local s="$OUT/summary.md" i b
  {
    echo "# gantry GPU verification"
    echo
    echo '```'
    cat "$OUT/environment.log"
    echo '```'
    echo
    if [[ -f $OUT/nvidia-smi.log ]]; then
      echo "## GPUs"
      echo
      echo '```'
      { grep -v '^\$ ' "$OUT/nvidia-smi.log" || true; } | sed -n '1,/^$/p' | sed '/^$/d'
      echo '```'
      echo
    fi
    echo "## Steps"
    echo
    echo "| step | result | note | log |"
    echo "|---|---|---|---|"
    for i in "${!STEP_NAMES[@]}"; do
      echo "| ${STEP_NAMES[$i]} | ${STEP_STATUS[$i]} | ${STEP_NOTES[$i]} | $OUT/${STEP_NAMES[$i]}.log |"
    done
    echo
    for f in ctest-gpu-ops ctest-gpu; do
      [[ -f $OUT/$f.log ]] || continue
      if [[ $f == ctest-gpu-ops ]]; then echo "## ctest -L gpu -R BackendOps (the op suite, run first)"
      else echo "## ctest -L gpu -E BackendOps (the other GPU tests)"; fi
      echo
      echo '```'
      grep -E 'tests passed|tests failed|\(Failed\)|\(Skipped\)|Not Run|\*\*\*Timeout|Total Test time' \
        "$OUT/$f.log" || echo "(no ctest summary line; see the log)"
      echo '```'
      echo
    done
    echo "## DCGAN training step, samples/s (gantry vs PyTorch, same GPU)"
    echo
    echo "gantry's samples/s is batch / median step (gantry-bench-step); PyTorch's is shown"
    echo "the same way (samples/s@med) and as batch * steps / elapsed (dcgan_torch.py's own)."
    echo "$WARMUP warm-up + $STEPS timed steps per batch size in both."
    echo
    echo "| precision | batch | gantry | PyTorch @med | PyTorch elapsed | gantry / PyTorch @med |"
    echo "|---|---:|---:|---:|---:|---:|"
    local p g t te
    for p in fp32 bf16; do
      declare -A G=() T=() TE=()
      while read -r b v; do G[$b]=$v; done < <(table_col "$OUT/gantry-step-$p.log" samples/s)
      while read -r b v; do T[$b]=$v; done < <(table_col "$OUT/torch-step-$p.log" samples/s@med)
      while read -r b v; do TE[$b]=$v; done < <(table_col "$OUT/torch-step-$p.log" samples/s)
      for b in ${BATCHES//,/ }; do
        g=${G[$b]:-n/a}; t=${T[$b]:-n/a}; te=${TE[$b]:-n/a}
        echo "| $p | $b | $g | $t | $te | $(awk -v g="$g" -v t="$t" 'BEGIN { if (g + 0 > 0 && t + 0 > 0) printf "%.2f", g / t; else print "n/a" }') |"
      done
      unset G T TE
    done
    echo
    for f in gantry-step-fp32 gantry-step-bf16 torch-step-fp32 torch-step-bf16 \
             allreduce-nccl-fp32 allreduce-nccl-bf16; do
      [[ -f $OUT/$f.log ]] || continue
      echo "### $f"
      echo
      echo '```'
      { grep -v '^\$ ' "$OUT/$f.log" || echo "(no output)"; } | tail -n 25
      echo '```'
      echo
    done
  } >"$s"
}

if [[ -n $BUNDLE ]]; then
  record build SKIP "--bundle $BUNDLE: prebuilt binaries"
elif ((SKIP_BUILD)); then
  if [[ -x $BUILD/bin/gantry-bench-step ]]; then
    record build SKIP "--skip-build: reusing $BUILD"
  else
    record build FAIL "--skip-build, but $BUILD/bin/gantry-bench-step does not exist"
  fi
elif ! run_step build-configure cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGANTRY_CUDA=ON \
       -DCMAKE_CUDA_ARCHITECTURES=90 ||
   ! run_step build cmake --build "$BUILD" -j"$(nproc)"; then
  echo "gpu_verify: the build failed; nothing to measure (see $OUT/build*.log)" >&2
  write_summary
  cat "$OUT/summary.md"
  exit 1
fi

# ------------------------------------------------------------------ 2. GPU tests
# The op suite first (its ctest names and gtest names hold "BackendOps"), then the rest:
# a wrong kernel shows as a failed op row before it shows as a failed training run.
# note_skips LOG PATTERN: adds to the last step's note how many tests LOG says were skipped.
note_skips() {
  local skipped
  skipped=$(grep -c "$2" "$1" || true)
  if ((skipped > 0)); then
    STEP_NOTES[-1]="${STEP_NOTES[-1]:+${STEP_NOTES[-1]}; }$skipped test(s) SKIPPED on a GPU machine: see the log"
  fi
}
if [[ -n $BUNDLE ]]; then
  run_step gpu-op-suite "$(bin gantry_gpu_tests)" --gtest_brief=1 '--gtest_filter=*BackendOps*' || true
  note_skips "$OUT/gpu-op-suite.log" '\[  SKIPPED \]'
  run_step gpu-tests "$(bin gantry_gpu_tests)" --gtest_brief=1 '--gtest_filter=-*BackendOps*' || true
  note_skips "$OUT/gpu-tests.log" '\[  SKIPPED \]'
  gantry_bundle_link_dataset >/dev/null 2>&1 || true
  for scenario in single resume; do
    run_step "gpu-worker-$scenario" bash tests/gpu/gpu_worker_e2e.sh mpirun "$(bin gantry-worker)" "$scenario" || true
  done
else
  run_step ctest-gpu-ops ctest --test-dir "$BUILD" -L gpu -R BackendOps --output-on-failure --no-tests=error || true
  note_skips "$OUT/ctest-gpu-ops.log" '(Skipped)'
  run_step ctest-gpu ctest --test-dir "$BUILD" -L gpu -E BackendOps --output-on-failure --no-tests=error || true
  note_skips "$OUT/ctest-gpu.log" '(Skipped)'
fi

# ------------------------------------------------------------------ 3. the GPUs
NGPU=0
if command -v nvidia-smi >/dev/null; then
  run_step nvidia-smi bash -c 'nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; echo; nvidia-smi' || true
  NGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -c . || true)
else
  skip_step nvidia-smi "nvidia-smi not found: no NVIDIA driver on this machine"
fi
echo "GPUs visible: $NGPU"

# ------------------------------------------------------------------ 4. gantry's step throughput
for p in fp32 bf16; do
  run_step "gantry-step-$p" "$(bin gantry-bench-step)" --device cuda --precision "$p" \
    --batch-size "$BATCHES" --warmup "$WARMUP" --steps "$STEPS" || true
done

# ------------------------------------------------------------------ 5. PyTorch on the same GPU
torch_py=""
torch_why=()
for py in ${TORCH_PYTHON:-} /usr/bin/python3 python3; do
  command -v "$py" >/dev/null || { torch_why+=("$py: not found"); continue; }
  if why=$("${outside_bundle[@]}" "$py" - 2>&1 <<'EOF'
import sys
try:
    import torch
except Exception as e:
    print(f"no torch ({e.__class__.__name__})"); sys.exit(1)
if torch.version.cuda is None:
    print(f"torch {torch.__version__} is built without CUDA"); sys.exit(1)
if not torch.cuda.is_available():
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU"); sys.exit(1)
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}")
EOF
  ); then
    torch_py=$py
    echo "PyTorch port: $py ($why)"
    break
  fi
  torch_why+=("$py: $why")
done
for p in fp32 bf16; do
  if [[ -n $torch_py ]]; then
    run_step "torch-step-$p" "${outside_bundle[@]}" "$torch_py" bench/torch/dcgan_torch.py --device cuda --precision "$p" \
      --batch-size "$BATCHES" --warmup "$WARMUP" --steps "$STEPS" --json "$OUT/torch-step.jsonl" || true
  else
    skip_step "torch-step-$p" "no Python here has torch with CUDA ($(IFS=';'; echo "${torch_why[*]}")); PyTorch comparison not measured"
  fi
done

# ------------------------------------------------------------------ 6. NCCL all-reduce of the gradient buffer
for d in fp32 bf16; do
  if ((NGPU >= 2)); then
    run_step "allreduce-nccl-$d" mpirun --allow-run-as-root -np "$NGPU" \
      "$(bin gantry-bench-nccl)" --sizes "$GRAD_VALUES" --dtype "$d" || true
  else
    skip_step "allreduce-nccl-$d" "$NGPU GPU(s) visible: busbw across ranks needs >= 2 GPUs (NCCL refuses two ranks on one GPU)"
  fi
done

# ------------------------------------------------------------------ summary
write_summary
echo
echo "================================================================ $OUT/summary.md"
cat "$OUT/summary.md"
exit "$any_fail"
