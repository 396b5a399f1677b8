#!/usr/bin/env bash
# Makes docs/dashboard.png: a gantry-coordinator with --http-listen, `mpirun -np 2
# gantry-worker serve`, a sweep over global batch 128, 64 and 32 (3 epochs each of 4,096
# Fashion-MNIST images; the smallest batch last, so the newest sample grid is that of the
# most steps; rank 1's compute stretched 1.5 times so the straggler panel has something
# to show), and the finished job's page in headless Chromium.
#
# Usage: scripts/dashboard_screenshot.sh [OUT.png]   (default docs/dashboard.png)
# Needs build/bin/{gantry-coordinator,gantry,gantry-worker}, mpirun, chromium, Debian's
# Fashion-MNIST (/usr/share/datasets/fashion-mnist) and, for the quality card, its judge
# (gantry-worker train-judge --dataset fashion-mnist). Takes a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/dashboard.png}
bin=build/bin
dir=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

# Waits up to 20 s for a port file to hold a port, then prints it.
wait_for_port() {
  for _ in $(seq 200); do
    if [[ -s $1 ]] && read -r port < "$1" && [[ $port -gt 0 ]]; then echo "$port"; return; fi
    sleep 0.1
  done
  echo "no port in $1" >&2
  exit 1
}

"$bin/gantry-coordinator" --listen 127.0.0.1:0 --port-file "$dir/port" --http-listen 127.0.0.1:0 \
  --http-port-file "$dir/http_port" --db "$dir/gantry.db" --data-root /usr/share/datasets --allow-debug-settings \
  > "$dir/coordinator.log" 2>&1 &
pids+=($!)
port=$(wait_for_port "$dir/port")
http_port=$(wait_for_port "$dir/http_port")
gantry=("$bin/gantry" --coordinator "127.0.0.1:$port" --timeout 20)

id=$("${gantry[@]}" --json submit --dataset fashion-mnist --world-size 2 --limit-images 4096 \
  --batch-size 128,64,32 --epochs 3 --debug-slow-rank 1 --debug-slow-factor 1.5 --name fashion-sweep |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
mpirun --allow-run-as-root --oversubscribe -np 2 "$bin/gantry-worker" serve --coordinator "127.0.0.1:$port" \
  --runs-dir "$dir/runs" --max-jobs 1 > "$dir/pool.log" 2>&1 &
pids+=($!)
"${gantry[@]}" watch "$id" --for 1200 | tail -n 1
"${gantry[@]}" status "$id" | grep -q succeeded || { cat "$dir/pool.log"; exit 1; }

chromium --headless --disable-gpu --no-sandbox --no-first-run --disable-dev-shm-usage \
  --user-data-dir="$dir/chromium" --window-size=1280,1750 --hide-scrollbars --virtual-time-budget=8000 \
  --screenshot="$dir/page.png" "http://127.0.0.1:$http_port/#$id" > "$dir/chromium.log" 2>&1
cp "$dir/page.png" "$out"
echo "$out: job $id"
