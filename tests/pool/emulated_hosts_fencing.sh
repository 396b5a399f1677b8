#!/usr/bin/env bash
# A partition between a worker pool and the coordinator that outlasts the lease, on three
# emulated hosts (scripts/emulated_hosts.sh; 1 Gbit/s links): the coordinator on host 0,
# pool A on host 1, pool B on host 2, both with their --runs-dir on the storage they share
# (this machine's disk).
#
#   1. A trains a job (one rank) and checkpoints into runs/ID.
#   2. Host 1's link is cut: A goes on training and writing runs/ID, unaware.
#   3. A's lease runs out; the coordinator requeues the job (attempt 2); B takes it and
#      continues in runs/ID from A's newest checkpoint, claiming the folder (fencing epoch
#      2 in runs/ID/fence.txt).
#   4. A must stop without writing another byte into runs/ID: every write syscall of A
#      (strace, from the start) that touches runs/ID must lie before the claim's time, and A
#      says why it dropped the job. B must finish the job: SUCCEEDED in 2 attempts, each
#      epoch in epochs.csv once.
#   5. The link comes back: A keeps serving, and the job stays B's (SUCCEEDED).
#
# Usage: emulated_hosts_fencing.sh COORDINATOR WORKER CLI. Needs root (namespaces, the
# test command runs as root) and strace. The hosts are a set of their own, removed on
# every exit.
set -uo pipefail
coordinator_bin=$1 worker=$2 cli=$3
here=$(cd "$(dirname "$0")" && pwd)
hosts="bash $here/../../scripts/emulated_hosts.sh"
# shellcheck source=../testing/bounded_waits.sh
source "$here/../testing/bounded_waits.sh"   # wait_for, since
readonly LEASE_S=5 EPOCHS=14
export GANTRY_HOSTS_NAME=gantry-f$$

work=$(mktemp -d)
fail() {
  echo "FAIL: $*"
  for f in coordinator.log a.log b.log hosts.log; do
    [[ -e $work/$f ]] && { echo "--- $f (tail):"; tail -25 "$work/$f"; }
  done
  exit 1
}
(( EUID == 0 )) || { echo "FAIL: needs root for network namespaces (bash scripts/test.sh runs as root)"; exit 1; }
command -v strace >/dev/null || { echo "FAIL: no strace (bash scripts/install_deps.sh installs it)"; exit 1; }
cleanup() {
  $hosts down >/dev/null 2>&1 || echo "WARNING: could not remove the emulated hosts $GANTRY_HOSTS_NAME-*"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

$hosts up 3 --rate 1gbit >"$work/hosts.log" 2>&1 || fail "emulated_hosts.sh up failed"
$hosts exec 0 -- "$coordinator_bin" --listen 10.77.0.1:0 --port-file "$work/port" --db "$work/gantry.db" \
    --data-root /usr/share/datasets --lease-seconds "$LEASE_S" >"$work/coordinator.log" 2>&1 &
disown  # ended by the teardown
port_known() { [[ -s $work/port ]]; }
wait_for 15 port_known || fail "the coordinator did not start on host 0"
address=10.77.0.1:$(cat "$work/port")
# The CLI runs on host 0 beside the coordinator (this namespace has no link to the hosts).
gantry() { $hosts exec 0 -- "$cli" --coordinator "$address" --timeout 20 "$@"; }
field() { python3 -c 'import json, sys; v = json.load(sys.stdin)
for k in sys.argv[1].split("."): v = v.get(k, {}) if isinstance(v, dict) else {}
print(v if v != {} else "")' "$1"; }
status_of() { gantry --json status "$id" 2>/dev/null | field "$1"; }

# 256 images in batches of 16 (16 steps an epoch), a checkpoint every 4 steps.
id=$(gantry --json submit --dataset fashion-mnist --world-size 1 --limit-images 256 --batch-size 16 \
       --epochs "$EPOCHS" --checkpoint-every-steps 4 --quality off --name fencing | field id)
[[ -n $id ]] || fail "submit failed"
run=$work/runs/$id

# Pool A, every file-changing syscall of it recorded with its time (-ttt) and, for
# descriptors, the file's path (-y).
traced=openat,creat,write,pwrite64,writev,rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat
traced+=,ftruncate,truncate,fallocate
$hosts exec 1 -- strace -f -qq -ttt -y --seccomp-bpf -e trace="$traced" -o "$work/a.strace" \
    "$worker" serve --coordinator "$address" --runs-dir "$work/runs" --report-seconds 0.3 >"$work/a.log" 2>&1 &
disown
checkpointed() { [[ $(status_of checkpoint.run_step) =~ ^[0-9]+$ ]] && (( $(status_of checkpoint.run_step) >= 8 )); }
wait_for 90 checkpointed || fail "pool A did not checkpoint step 8 within 90 s"

cut_s=$(date +%s.%N)
$hosts link-down 1 >>"$work/hosts.log" 2>&1 || fail "link-down 1 failed"
queued() { [[ $(status_of state) == JOB_STATE_QUEUED ]]; }
wait_for $(( LEASE_S + 20 )) queued || fail "the job was not requeued within the lease after host 1 was cut off"
echo "requeued $(since "$cut_s") s after host 1's link went down (lease ${LEASE_S} s)"

$hosts exec 2 -- "$worker" serve --coordinator "$address" --runs-dir "$work/runs" --report-seconds 0.3 \
    --max-jobs 1 >"$work/b.log" 2>&1 &
b_pid=$!
claimed() { grep -q '^epoch 2$' "$run/fence.txt" 2>/dev/null; }
wait_for 60 claimed || fail "pool B did not claim $run (fence.txt epoch 2) within 60 s"
claim_us=$(awk '/^claimed_unix_us / { print $2 }' "$run/fence.txt")
echo "pool B claimed the run folder: $(grep '^holder' "$run/fence.txt")"
a_dropped() { grep -q "$id dropped: .* was claimed by fencing epoch 2 .* so epoch 1 stops without writing" "$work/a.log"; }
wait_for 30 a_dropped || fail "pool A did not drop the job within 30 s of the claim"
grep -o "$id dropped: .*" "$work/a.log"
echo "pool A dropped the job $(since "$(awk -v us="$claim_us" 'BEGIN { printf "%.6f", us / 1e6 }')") s after the claim (seen by then)"

wait_for 240 eval '! kill -0 "$b_pid" 2>/dev/null' || fail "pool B (--max-jobs 1) did not finish the job within 240 s"
wait "$b_pid" || fail "pool B exited non-zero"
[[ $(status_of state) == JOB_STATE_SUCCEEDED ]] || fail "the job is $(status_of state), not SUCCEEDED"
[[ $(status_of attempts) == 2 ]] || fail "the job took $(status_of attempts) attempts, not 2"
grep -q "$id (attempt 2 of .*resuming from its newest checkpoint" "$run/log.txt" \
  || fail "the second attempt did not resume in $run"
rows=$(tail -n +2 "$run/epochs.csv" | cut -d, -f2 | tr '\n' ' ')
[[ $rows == "$(seq -s ' ' 1 "$EPOCHS") " ]] || fail "epochs.csv holds epochs '$rows', not 1..$EPOCHS once each"

$hosts link-up 1 >>"$work/hosts.log" 2>&1 || fail "link-up 1 failed"
sleep $(( LEASE_S ))
[[ -n $(ip netns pids "$GANTRY_HOSTS_NAME-h1") ]] || fail "pool A ended after the link came back (it should go on serving)"
[[ $(status_of state) == JOB_STATE_SUCCEEDED ]] || fail "the job is $(status_of state) after A came back"

# A's writes of the run folder: opens for writing, writes to its files, and changes of its
# entries. All of them before the claim; some of them after the cut (A went on writing,
# so the fence was needed).
ip netns pids "$GANTRY_HOSTS_NAME-h1" | xargs -r kill -TERM 2>/dev/null
wait_for 20 eval '[[ -z $(ip netns pids "$GANTRY_HOSTS_NAME-h1") ]]' || true
writes=$work/a_writes.txt
grep -F "$run" "$work/a.strace" \
  | grep -E ' (openat|creat)\(.*(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC)| (write|pwrite64|writev|ftruncate|fallocate)\([0-9]+<| (rename|renameat|renameat2|link|linkat|unlink|unlinkat|mkdir|mkdirat|truncate)\(' \
  | grep -v '/fence.txt' >"$writes"
cut_us=$(awk -v t="$cut_s" 'BEGIN { printf "%.0f", t * 1000000 }')
count_between() { awk -v lo="$1" -v hi="$2" '{ t = $2 * 1000000 } t >= lo && t < hi { n++ } END { print n + 0 }' "$writes"; }
before_cut=$(count_between 0 "$cut_us")
cut_to_claim=$(count_between "$cut_us" "$claim_us")
after_claim=$(count_between "$claim_us" 99999999999999999)
echo "pool A's writes into $run: $before_cut before the cut, $cut_to_claim while cut off, $after_claim after the claim"
(( before_cut > 0 )) || fail "strace saw no write of A into the run folder at all (the check would prove nothing)"
(( cut_to_claim > 0 )) || fail "A wrote nothing while cut off (expected it to go on training and checkpointing)"
if (( after_claim > 0 )); then
  awk -v lo="$claim_us" '$2 * 1000000 >= lo' "$writes" | head -10
  fail "pool A wrote into the run folder after pool B claimed it"
fi
echo "PASS"
