#!/usr/bin/env bash
# How long next-frame models stay right on flows they never saw (docs/flow.md, "Unrolled
# training"): every RUN rolled out over every case of a held-out set from several start
# frames, one table row per rollout and a median row per run. The held-out set is
# simulated here unless HELDOUT names one: cylinders at Reynolds numbers between and
# beyond the training set's, and at Re 100 in places the training set never had them
# (make-flow --cases, seeds the training set does not use).
#
#   scripts/flow_stability.sh OUT RUN [RUN ...]
#   env: STEPS (model steps per rollout, 300), STARTS (start frames, "0 40 80"), HELDOUT
#        (a folder of cases; default: OUT/heldout, made with FRAMES frames each), FRAMES
#        (STEPS + the largest start + 1), RES (Reynolds numbers of the made cases, "90 110 140"),
#        PLACES (obstacle centres "x,y" in cells of the made cases at Re 100, "80,32 51,24":
#        further downstream, and off the middle row; the default grid's is 51,32),
#        WORKER (build/bin/gantry-worker, else gantry-worker on the PATH), RANKS (2),
#        REPORT_EVERY (10)
#
# Columns: the first step below vorticity correlation 0.95 and 0.8 (">N" when it never
# fell), the first blow-up (a non-finite value or a field norm beyond 10x the truth's;
# "-" for none), the relative L2 error at the last step against persistence's (copying the
# start frame), the energy spectrum error at the last step, the Strouhal number
# predicted / true, all read from each rollout's rollout.md and rollout.csv.
set -euo pipefail
(($# >= 2)) || { sed -n 2,18p "$0" >&2; exit 2; }
out=$1
shift
runs=("$@")
steps=${STEPS:-300}
starts=${STARTS:-0 40 80}
worker=${WORKER:-build/bin/gantry-worker}
[[ -z ${WORKER:-} && ! -x $worker ]] && worker=$(command -v gantry-worker || echo "$worker")
ranks=${RANKS:-2}
report_every=${REPORT_EVERY:-10}
[[ -x $worker ]] || { echo "flow_stability: no $worker and no gantry-worker on the PATH (bash scripts/build.sh)" >&2; exit 2; }
for run in "${runs[@]}"; do [[ -f $run/run.json ]] || { echo "flow_stability: $run holds no run.json" >&2; exit 2; }; done
mkdir -p "$out/rollouts"
mpi=(mpirun --allow-run-as-root --oversubscribe -np "$ranks")

heldout=${HELDOUT:-}
if [[ -z $heldout ]]; then
  heldout=$out/heldout
  largest=0
  for s in $starts; do ((s > largest)) && largest=$s; done
  frames=${FRAMES:-$((steps + largest + 1))}
  if [[ ! -d $heldout ]]; then
    cases=$out/heldout.yaml
    : > "$cases"
    seed=101
    for re in ${RES:-90 110 140}; do echo "- {re: $re, seed: $((seed++))}" >> "$cases"; done
    for place in ${PLACES:-80,32 51,24}; do
      echo "- {re: 100, obstacle_x: ${place%,*}, obstacle_y: ${place#*,}, seed: $((seed++))}" >> "$cases"
    done
    echo "flow_stability: simulating the held-out cases ($(wc -l < "$cases") x $frames frames) into $heldout" >&2
    "${mpi[@]}" "$worker" make-flow --out "$heldout" --cases "$cases" --frames "$frames" > "$out/heldout.log" 2>&1 \
      || { cat "$out/heldout.log" >&2; exit 1; }
  fi
fi

# field FILE PATTERN: the first number after PATTERN in FILE, or "".
field() { grep -oE -- "$2 [0-9]+" "$1" | head -1 | grep -oE '[0-9]+$' || true; }
# last_row FILE COLUMN: COLUMN of rollout.csv's last row.
last_row() { awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i } END { print $c[name] }' "$1"; }

rows=$out/rows.txt
: > "$rows"
echo "| run | case | start | steps > 0.95 | steps > 0.8 | blow-up | rel. L2 at $steps (persistence) | spectrum err. at $steps | Strouhal predicted / true |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
for run in "${runs[@]}"; do
  for case in "$heldout"/*/; do
    case=${case%/}
    for start in $starts; do
      dest=$out/rollouts/$(basename "$run")-$(basename "$case")-$start
      rm -rf "$dest"
      "${mpi[@]}" "$worker" rollout --run "$run" --case "$case" --steps "$steps" --start-frame "$start" \
        --report-every "$report_every" --out "$dest" > "$dest.log" 2>&1 || { cat "$dest.log" >&2; exit 1; }
      md=$dest/rollout.md
      below95=$(field "$md" "first below 0.95 at step")
      below80=$(field "$md" "first below 0.8 at step")
      blow=$(field "$md" "blew up at step")
      held95=$((${below95:-$((steps + 1))} - 1))
      held80=$((${below80:-$((steps + 1))} - 1))
      l2=$(last_row "$dest/rollout.csv" relative_l2)
      still=$(last_row "$dest/rollout.csv" persistence_relative_l2)
      spectrum=$(last_row "$dest/rollout.csv" spectrum_error)
      strouhal=$(grep -oE "predicted [0-9.]+, true [0-9.]+" "$md" | sed 's/predicted //; s/, true / \/ /' || true)
      echo "$(basename "$run") $held95 $held80 ${blow:-0} $l2 $spectrum" >> "$rows"
      printf '| %s | %s | %s | %s | %s | %s | %.3g (%.3g) | %.3g | %s |\n' "$(basename "$run")" "$(basename "$case")" \
        "$start" "$([[ -z $below95 ]] && echo ">$steps" || echo "$held95")" \
        "$([[ -z $below80 ]] && echo ">$steps" || echo "$held80")" "${blow:--}" "$l2" "$still" "$spectrum" \
        "${strouhal:--}"
    done
  done
done
echo
echo "| run | median steps > 0.95 | median steps > 0.8 | rollouts blown up | median rel. L2 at $steps | median spectrum err. at $steps |"
echo "|---|---:|---:|---:|---:|---:|"
for run in "${runs[@]}"; do
  name=$(basename "$run")
  awk -v run="$name" '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    $1 == run { ++n; h95[n] = $2; h80[n] = $3; blown += ($4 > 0); l2[n] = $5; sp[n] = $6 }
    END { printf "| %s | %g | %g | %d of %d | %.3g | %.3g |\n", run, median(h95, n), median(h80, n), blown, n,
          median(l2, n), median(sp, n) }' "$rows"
done
