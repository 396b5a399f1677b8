# The probe classes about processes (issue 45), sourced by worker_probe.sh, which
# provides $worker, $scratch, $timeout_s, count[], note and the fixtures ($scratch/run, a
# digit DCGAN run; $scratch/p2p, a pix2pix flow run; $scratch/case, its case).
#
#   coordinators  a second gantry-coordinator on the --db of a running one, by the same
#                 path, a symbolic link, "./" and "../" spellings, and two started at the
#                 same instant on a new database;
#   concurrent    two writers at once to one output, for each output kind: export,
#                 generate, rollout, make-flow, make-dataset, train (a run folder);
#   signals       SIGTERM and SIGINT during every job kind: standalone (train, generate,
#                 export, rollout, make-flow, make-dataset) and in a pool of 2 ranks
#                 (train, generate, rollout), the signal to one rank (the rollout, of
#                 the 12-frame fixture case, may be over by the time the signal comes).
# Verdicts, in worker_probe.sh's columns:
#   coordinators  refused: the second exits 2 naming the holder's pid (of two at once:
#                 one serves, the other exits 2); changed: both serve one database;
#                 other: any other exit or message;
#   concurrent    refused: one writer succeeds and the other exits 1 or 2 naming the
#                 path, and the output is the winner's whole; changed: both report
#                 success, or the output is a mix; other: neither succeeds;
#   signals       ran: the process (standalone) or the pool (mpirun) ends within the
#                 documented time (standalone 5 s; a pool --flush-seconds + 5 s) with
#                 128 + the signal or 0 (it had finished), leaving no staging folder or
#                 temporary file; changed: it left one; hung: it did not end in time;
#                 other: another exit code; crashed: an abort or a segfault.
# shellcheck shell=bash

coordinator_bin=$(dirname "$worker")/gantry-coordinator
cli_bin=$(dirname "$worker")/gantry

tally() {
  local class=$1 verdict=$2
  shift 2
  count[$class,$verdict]=$((${count[$class,$verdict]:-0} + 1))
  [[ $verdict == refused || $verdict == ran ]] || note "[$class] $verdict: $*"
}

# Kills (SIGKILL) every process of the session started by `setsid` with leader $1.
kill_tree() { kill -9 -- "-$1" 2>/dev/null || true; }

# ---------------------------------------------------------------------------- coordinators
coordinators() {
  echo "coordinators ..."
  [[ -x $coordinator_bin ]] || { echo "no gantry-coordinator beside $worker"; exit 2; }
  local d=$scratch/co trial spelling rc out pid port
  for trial in 1 2 3 4; do
    rm -rf "$d" && mkdir -p "$d/data" "$d/sub"
    setsid "$coordinator_bin" --listen 127.0.0.1:0 --db "$d/g.db" --data-root "$d/data" --port-file "$d/port" \
      >"$d/first.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do [[ -s $d/port ]] && break; sleep 0.05; done
    port=$(cat "$d/port" 2>/dev/null)
    ln -s "$d/g.db" "$d/link.db"
    for spelling in "$d/g.db" "$d/link.db" "$d/./g.db" "$d/sub/../g.db" g.db; do
      out=$(cd "$d" && timeout -k 2 10 "$coordinator_bin" --listen 127.0.0.1:0 --db "$spelling" \
              --data-root "$d/data" 2>&1)
      rc=$?
      if ((rc == 2)) && [[ $out == *"pid $pid, address 127.0.0.1:$port"* ]]; then tally coordinators refused
      elif ((rc == 124 || rc == 137)); then tally coordinators changed "--db $spelling: a second coordinator served"
      elif ((rc >= 128)); then tally coordinators crashed "--db $spelling: exit $rc: ${out:0:300}"
      else tally coordinators other "--db $spelling: exit $rc: ${out:0:300}"; fi
    done
    kill_tree "$pid"
    wait "$pid" 2>/dev/null
    # Two at once on a new database.
    rm -rf "$d" && mkdir -p "$d/data"
    local a b ra rb
    (cd "$d" && exec timeout -k 2 6 "$coordinator_bin" --listen 127.0.0.1:0 --db "$d/new.db" --data-root "$d/data" \
       >"$d/a.log" 2>&1) &
    a=$!
    (cd "$d" && exec timeout -k 2 6 "$coordinator_bin" --listen 127.0.0.1:0 --db "$d/new.db" --data-root "$d/data" \
       >"$d/b.log" 2>&1) &
    b=$!
    wait "$a"; ra=$?
    wait "$b"; rb=$?
    # The one that serves runs until timeout's TERM (exit 0 after a clean shutdown, or 124).
    if [[ ($ra == 2 && ($rb == 0 || $rb == 124)) || ($rb == 2 && ($ra == 0 || $ra == 124)) ]]; then
      tally coordinators refused
    elif [[ $ra != 2 && $rb != 2 ]]; then tally coordinators changed "two at once: exits $ra and $rb, both served"
    else tally coordinators other "two at once: exits $ra and $rb: $(cat "$d/a.log" "$d/b.log" | head -c 400)"; fi
  done
  rm -rf "$d"
}

# ---------------------------------------------------------------------------- concurrent
# A folder of 12 small PNGs in two class folders, for make-dataset.
make_pngs() {
  python3 - "$1" <<'EOF'
import os, struct, sys, zlib
def png(w, h, seed):
    rows = b"".join(b"\0" + bytes((x * 7 + y * 3 + seed) % 256 for x in range(w * 3)) for y in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
for c in ("a", "b"):
    os.makedirs(os.path.join(sys.argv[1], c), exist_ok=True)
    for i in range(6):
        open(os.path.join(sys.argv[1], c, f"{i}.png"), "wb").write(png(16, 16, i + (c == "b") * 50))
EOF
}

# writer KIND OUT N: the command line of writer N (0 or 1) of KIND to OUT.
writer() {
  local kind=$1 out=$2 n=$3
  case $kind in
    export) echo "$worker export --run $scratch/run --format safetensors --dtype $([[ $n == 0 ]] && echo fp32 || echo bf16) --out $out" ;;
    generate) echo "$worker generate --run $scratch/run --count 6 --seed $((n + 1)) --out $out" ;;
    rollout) echo "$worker rollout --run $scratch/p2p --case $scratch/case --steps $((n + 2)) --out $out" ;;
    make-flow) echo "$worker make-flow --out $out --nx 64 --ny 32 --frames 4 --warmup-periods 0.1 --seed $((n + 1))" ;;
    make-dataset) echo "$worker make-dataset --from $scratch/pngs --out $out --image-size $((8 + 8 * n))" ;;
    train) echo "$worker train --dataset mnist --data-dir $scratch/mnist --batch-size 16 --max-steps 2 --quality off --seed $((n + 1)) --out $out" ;;
  esac
}

# The output's identity: which writer made it (the flag that differs), or "mix".
made_by() {
  local kind=$1 out=$2
  case $kind in
    export) python3 - "$out" <<'EOF'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
d = {v["dtype"] for k, v in h.items() if k != "__metadata__"}
end = max(v["data_offsets"][1] for k, v in h.items() if k != "__metadata__")
print((1 if "BF16" in d else 0) if len(raw) == 8 + n + end else "mix")
EOF
    ;;
    generate) grep -o '"seed": [0-9]*' "$out/generate.json" 2>/dev/null | awk '{print $2 - 1}' ;;
    rollout) local rows; rows=$(($(wc -l <"$out/rollout.csv" 2>/dev/null || echo 0) - 1)); echo $((rows - 2)) ;;
    make-flow) grep -o '"seed": [0-9]*' "$out/flow.json" 2>/dev/null | awk '{print $2 - 1}' ;;
    make-dataset) echo "?" ;;  # one file, published by a rename that never replaces
    train) grep -o '"seed": [0-9]*' "$out/run.json" 2>/dev/null | head -1 | awk '{print $2 - 1}' ;;
  esac
}

concurrent() {
  echo "concurrent ..."
  local kind round out a b ra rb
  rm -rf "$scratch/pngs" && make_pngs "$scratch/pngs"
  for kind in export generate rollout make-flow make-dataset train; do
    for round in 1 2 3; do
      rm -rf "$scratch/c" && mkdir -p "$scratch/c"
      out=$scratch/c/out
      # shellcheck disable=SC2046
      (cd "$scratch" && exec timeout -k 5 "$timeout_s" $(writer "$kind" "$out" 0) >"$scratch/c/a.log" 2>&1) &
      a=$!
      # shellcheck disable=SC2046
      (cd "$scratch" && exec timeout -k 5 "$timeout_s" $(writer "$kind" "$out" 1) >"$scratch/c/b.log" 2>&1) &
      b=$!
      wait "$a"; ra=$?
      wait "$b"; rb=$?
      local logs
      logs=$(cat "$scratch/c/a.log" "$scratch/c/b.log")
      local leftovers
      leftovers=$(ls -A "$scratch/c" | grep -E '\.partial-|\.tmp\.' || true)
      if ((ra == 124 || ra == 137 || rb == 124 || rb == 137)); then tally concurrent hung "$kind: exits $ra $rb"
      elif ((ra >= 128 || rb >= 128)); then tally concurrent crashed "$kind: exits $ra $rb: ${logs:0:400}"
      elif ((ra == 0 && rb == 0)); then tally concurrent changed "$kind round $round: both writers succeeded"
      elif [[ -n $leftovers ]]; then tally concurrent changed "$kind round $round: left $leftovers"
      elif ((ra == 0 || rb == 0)) && [[ $logs == *"$out"* ]]; then
        local want=0 got
        ((ra == 0)) || want=1
        got=$(made_by "$kind" "$out")
        if [[ $got == "$want" || $got == "?" ]]; then tally concurrent refused
        else tally concurrent changed "$kind round $round: the output is not the winner's ($got, not $want)"; fi
      else tally concurrent other "$kind round $round: exits $ra $rb: ${logs:0:400}"; fi
    done
  done
  rm -rf "$scratch/c"
}

# ---------------------------------------------------------------------------- signals
# stop_one CLASS LABEL SIGNAL BOUND_S OUT CMD...: starts CMD in its own session, sends
# SIGNAL once it has worked for a moment, and judges how it ended.
stop_one() {
  local label=$1 sig=$2 bound=$3 out=$4
  shift 4
  # A background job of a script starts with SIGINT ignored; a user's Ctrl-C reaches a
  # program with the default action, so that is restored first.
  setsid python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
    "$@" >"$scratch/s/log" 2>&1 </dev/null &
  local pid=$! i
  # Mid-work: once its output's staging (or temporary) appears, else after 1.5 s.
  for i in $(seq 30); do
    compgen -G "$out*" >/dev/null && break
    sleep 0.05
  done
  sleep 0.5
  kill -"$sig" "$pid" 2>/dev/null
  local start=$SECONDS
  for i in $(seq $((bound * 10 + 20))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill_tree "$pid"
    wait "$pid" 2>/dev/null
    tally signals hung "$label: still running $((SECONDS - start)) s after SIG$sig"
    return
  fi
  wait "$pid"
  local rc=$? took=$((SECONDS - start))
  local signo
  signo=$(kill -l "$sig")
  local left
  left=$(ls -d "$out".partial-* "$out".tmp.* "$(dirname "$out")"/*.tmp.* 2>/dev/null | head -3)
  if ((took > bound)); then tally signals hung "$label: ended $took s after SIG$sig (bound $bound s)"
  elif [[ -n $left ]]; then tally signals changed "$label: SIG$sig left $left"
  elif ((rc == 0 || rc == 128 + signo)); then tally signals ran
  elif ((rc == 134 || rc == 139 || rc == 136 || rc == 135)); then
    tally signals crashed "$label: exit $rc after SIG$sig: $(tail -c 300 "$scratch/s/log")"
  else tally signals other "$label: exit $rc after SIG$sig: $(tail -c 300 "$scratch/s/log")"; fi
}

standalone_signals() {
  local sig kind out
  for sig in TERM INT; do
    for kind in train generate export rollout make-flow make-dataset; do
      rm -rf "$scratch/s" && mkdir -p "$scratch/s"
      out=$scratch/s/out
      case $kind in
        train) stop_one "standalone train" "$sig" 5 "$out" "$worker" train --dataset mnist \
                 --data-dir "$scratch/mnist" --batch-size 16 --epochs 1000 --quality off --out "$out" ;;
        generate) stop_one "standalone generate" "$sig" 5 "$out" "$worker" generate --run "$scratch/run" \
                    --count 20000 --batch 1 --out "$out" ;;
        export) stop_one "standalone export" "$sig" 5 "$out" "$worker" export --run "$scratch/run" \
                  --format safetensors --out "$out" ;;
        rollout) stop_one "standalone rollout" "$sig" 5 "$out" "$worker" rollout --run "$scratch/p2p" \
                   --case "$scratch/case" --steps 8 --out "$out" ;;
        make-flow) stop_one "standalone make-flow" "$sig" 5 "$out" "$worker" make-flow --out "$out" --nx 128 \
                     --ny 64 --frames 400 ;;
        make-dataset) stop_one "standalone make-dataset" "$sig" 5 "$out" "$worker" make-dataset \
                        --from "$scratch/pngs" --out "$out" --image-size 8 ;;
      esac
    done
  done
}

# A pool of 2 ranks on a coordinator of its own; the job, then the signal to rank 1.
pool_signals() {
  [[ -x $coordinator_bin && -x $cli_bin ]] || { echo "no gantry-coordinator or gantry beside $worker"; exit 2; }
  local d=$scratch/pool sig kind
  local flush=2
  for sig in TERM INT; do
    for kind in train generate rollout; do
      rm -rf "$d" && mkdir -p "$d/data" "$d/runs"
      cp -r "$scratch/mnist" "$d/data/mnist"
      cp -r "$scratch/case" "$d/data/case"
      setsid "$coordinator_bin" --listen 127.0.0.1:0 --db "$d/g.db" --data-root "$d/data" --port-file "$d/port" \
        --lease-seconds 5 >"$d/coordinator.log" 2>&1 &
      local cpid=$!
      for _ in $(seq 300); do [[ -s $d/port ]] && break; sleep 0.05; done
      local address=127.0.0.1:$(cat "$d/port")
      g() { timeout 30 "$cli_bin" --coordinator "$address" --timeout 10 "$@"; }
      setsid mpirun --allow-run-as-root --oversubscribe -np 2 "$worker" serve --coordinator "$address" \
        --runs-dir "$d/runs" --flush-seconds "$flush" --poll-seconds 1 >"$d/pool.log" 2>&1 &
      local mpid=$!
      local job=""
      case $kind in
        train) job=$(g submit --dataset mnist --data-dir "$d/data/mnist" --batch-size 16 --epochs 1000 --quality off \
                       2>/dev/null | grep -o 'job-[0-9]*' | head -1) ;;
        generate|rollout)
          local src
          if [[ $kind == generate ]]; then
            src=$(g submit --dataset mnist --data-dir "$d/data/mnist" --batch-size 16 --max-steps 2 --quality off \
                    --watch 2>/dev/null | grep -o 'job-[0-9]*' | head -1)
            job=$(g generate "$src" --count 20000 --batch 1 2>/dev/null | grep -o 'job-[0-9]*' | head -1)
          else
            src=$(g submit --model pix2pix --dataset flow --data-dir "$d/data/case" --image-size 32 --ngf 4 --ndf 4 \
                    --batch-size 4 --max-steps 1 --quality off --watch 2>/dev/null | grep -o 'job-[0-9]*' | head -1)
            job=$(g rollout "$src" --case "$d/data/case" --steps 11 2>/dev/null | grep -o 'job-[0-9]*' | head -1)
          fi ;;
      esac
      local i state=""
      for i in $(seq 600); do
        state=$(g jobs 2>/dev/null | awk -v j="$job" '$1 == j {print $2}')
        [[ $state == running ]] && break
        sleep 0.1
      done
      if [[ -z $job || $state != running ]]; then
        tally signals other "pool $kind: the job ($job) never ran: $(tail -c 300 "$d/pool.log")"
      else
        sleep 1.5
        # Rank 1: the gantry-worker under mpirun that is not rank 0 (the later pid).
        local rank1
        rank1=$(pgrep -s "$mpid" -f "gantry-worker serve" | sort -n | tail -1)
        kill -"$sig" "$rank1"
        local start=$SECONDS bound=$((flush + 5))
        for i in $(seq $((bound * 10 + 30))); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
        local took=$((SECONDS - start))
        if kill -0 "$mpid" 2>/dev/null; then
          tally signals hung "pool $kind: mpirun still running $took s after SIG$sig to rank 1"
        elif ((took > bound)); then tally signals hung "pool $kind: ended $took s after SIG$sig (bound $bound s)"
        elif compgen -G "$d/runs/*/generate-*.partial-*" >/dev/null; then
          tally signals changed "pool $kind: left $(ls -d "$d"/runs/*/generate-*.partial-*)"
        else
          state=$(g jobs 2>/dev/null | awk -v j="$job" '$1 == j {print $2}')
          if [[ $state == running ]]; then tally signals other "pool $kind: the job stayed RUNNING after the pool ended"
          else tally signals ran; fi
        fi
      fi
      kill_tree "$mpid"
      wait "$mpid" 2>/dev/null
      kill_tree "$cpid"
      wait "$cpid" 2>/dev/null
    done
  done
}

signals() {
  echo "signals ..."
  [[ -d $scratch/pngs ]] || make_pngs "$scratch/pngs"
  standalone_signals
  pool_signals
  rm -rf "$scratch/s" "$scratch/pool"
}
