#!/usr/bin/env bash
# gantry-worker training on the GPU, end to end, on a slice of Fashion-MNIST. Usage:
#   gpu_worker_e2e.sh MPIEXEC WORKER SCENARIO     SCENARIO: single | resume | np2
#   single: one rank, bf16 with dynamic loss scaling, then the same run fp32 on the GPU
#           and on the CPU, whose losses must agree closely.
#   resume: one rank, killed mid epoch 2 and resumed: bit-identical to an uninterrupted run.
#   np2:    mpirun -np 2, one GPU per rank, gradients over NCCL (needs 2 GPUs), overlapped
#           with backward (the default) and after it (--overlap off): the same losses
#           to the last bit.
# Exit 0: pass; 77: skipped (no dataset, no GPU, too few GPUs); else: fail, with the reason.
set -uo pipefail
mpiexec=$1 worker=$2 scenario=$3
data=/usr/share/datasets/fashion-mnist
[[ -e $data/train-images-idx3-ubyte.gz || -e $data/train-images-idx3-ubyte ]] || { echo "SKIP: no $data"; exit 77; }
root=$(mktemp -d)
log=$root/log
fail() { echo "FAIL ($scenario): $*"; echo "--- output:"; cat "$log"; exit 1; }
# Column NAME of data row ROW of run folder DIR's epochs.csv.
column() { awk -F, -v name="$2" -v row="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i }
                                            NR == row + 1 { print $c }' "$1/epochs.csv"; }
train() { "$worker" train --data-dir "$data" --limit-images 1024 --batch-size 64 --epochs 2 --seed 3 \
            --progress-seconds 1 "$@" >"$log" 2>&1; }
skip_without_gpu() {
  if grep -q "no CUDA device visible\|built without CUDA" "$log"; then
    echo "SKIP: $(grep -o 'no CUDA device visible.*\|built without CUDA.*' "$log" | head -1)"
    exit 77
  fi
}
# |a - b| <= tol * |b|
source "$(dirname "$0")/../testing/num_check.sh"
close() { num_check 'abs(a - b) <= t * abs(b)' a="$1" b="$2" t="$3"; }

case $scenario in
  single)
    train --device cuda --precision bf16 --loss-scale dynamic --out "$root/bf16"
    code=$?
    skip_without_gpu
    (( code == 0 )) || fail "bf16 run: exit code $code"
    grep -q '"device": "cuda"' "$root/bf16/run.json" || fail "run.json does not say device cuda"
    grep -q '"backend": "cuda"' "$root/bf16/run.json" || fail "run.json does not say backend cuda"
    grep -q "training on cuda:0" "$log" || fail "the log does not name the GPU"
    [[ $(tail -n +2 "$root/bf16/epochs.csv" | wc -l) == 2 ]] || fail "epochs.csv should have 2 rows"
    [[ -s $root/bf16/samples/epoch_002.png ]] || fail "no samples for epoch 2"
    [[ $(column "$root/bf16" skipped_steps_g 2) == 0 ]] || fail "bf16 skipped G steps: $(cat "$root/bf16/epochs.csv")"
    train --device cuda --out "$root/gpu" || fail "fp32 GPU run: exit code $?"
    train --device cpu --out "$root/cpu" || fail "fp32 CPU run: exit code $?"
    for row in 1 2; do
      for loss in d_loss g_loss; do
        gpu=$(column "$root/gpu" $loss $row) cpu=$(column "$root/cpu" $loss $row)
        close "$gpu" "$cpu" 0.01 || fail "epoch $row $loss: GPU $gpu vs CPU $cpu (more than 1% apart)"
      done
    done
    echo "PASS: bf16 and fp32 on the GPU; fp32 losses GPU vs CPU: $(column "$root/gpu" d_loss 2)/$(column "$root/cpu" d_loss 2)"
    ;;
  resume)
    # On the GPU, a run SIGKILLed mid epoch 2 and resumed from its newest checkpoint ends
    # bit-identical to one never interrupted: the model, both optimizers and the scaler go
    # through host memory into the checkpoint and back, and the kernels use no atomics.
    settings=(--data-dir "$data" --limit-images 256 --batch-size 32 --epochs 2 --checkpoint-every-steps 3 \
              --device cuda --precision bf16 --loss-scale dynamic --seed 3)
    "$worker" train "${settings[@]}" --out "$root/reference" >"$log" 2>&1
    code=$?
    skip_without_gpu
    (( code == 0 )) || fail "the uninterrupted run: exit code $code"
    # 150 ms of sleep a step (no effect on the arithmetic) leaves time for the kill.
    "$worker" train "${settings[@]}" --out "$root/resumed" --debug-slow-rank 0 --debug-slow-ms 150 >"$log" 2>&1 &
    job=$!
    for _ in $(seq 600); do [[ -e $root/resumed/checkpoints/ckpt-12.bin ]] && break; sleep 0.05; done
    kill -KILL "$job"
    wait "$job" && fail "the run exited 0 although it was killed"
    [[ -e $root/resumed/checkpoints/ckpt-12.bin && ! -e $root/resumed/checkpoints/ckpt-16.bin ]] \
      || fail "not killed between checkpoints 12 and 16"
    "$worker" train --resume "$root/resumed" >"$log" 2>&1 || fail "resume: exit code $?"
    grep -qE "resuming at batch 32 epoch 2 step [1-7]/8" "$log" || fail "did not resume mid epoch 2"
    crc() { "$worker" inspect-checkpoint "$1" | grep '"state_crc32"'; }
    [[ $(crc "$root/resumed") == "$(crc "$root/reference")" ]] \
      || fail "final weights/optimizer/scaler state differ from the uninterrupted run"
    cmp -s "$root/resumed/samples/epoch_002.npy" "$root/reference/samples/epoch_002.npy" \
      || fail "epoch 2 samples differ from the uninterrupted run's"
    echo "PASS: resumed on the GPU bit-identical to the uninterrupted run"
    ;;
  np2)
    gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
    (( gpus >= 2 )) || { echo "SKIP: $gpus GPU(s) visible; NCCL needs one per rank"; exit 77; }
    "$mpiexec" --allow-run-as-root -np 2 "$worker" train --data-dir "$data" --limit-images 1024 --batch-size 64 \
      --epochs 1 --device cuda --seed 3 --out "$root/np2" >"$log" 2>&1 || fail "exit code $?"
    grep -q '"transport": "nccl"' "$root/np2/run.json" || fail "run.json does not say transport nccl"
    [[ $(column "$root/np2" world_size 1) == 2 ]] || fail "epochs.csv world_size is not 2"
    ! grep -q "gradients are all-reduced after backward" "$log" || fail "the NCCL run did not overlap: $(grep -o 'gradients are all-reduced after backward.*' "$log")"
    "$mpiexec" --allow-run-as-root -np 2 "$worker" train --data-dir "$data" --limit-images 1024 --batch-size 64 \
      --epochs 1 --device cuda --seed 3 --overlap off --out "$root/np2-off" >"$log" 2>&1 || fail "--overlap off: exit code $?"
    for c in d_loss g_loss; do
      [[ $(column "$root/np2" $c 1) == "$(column "$root/np2-off" $c 1)" ]] \
        || fail "$c overlapped $(column "$root/np2" $c 1) != after backward $(column "$root/np2-off" $c 1)"
    done
    echo "PASS: 2 ranks over NCCL, overlapped and not, the same losses"
    ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
