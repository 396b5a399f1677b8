#!/usr/bin/env bash
# The chart's pods, played in network namespaces (no Kubernetes cluster can be reached):
# renders helm/gantry, reads the rendered commands, arguments, environment, ports,
# probes, volumes and security contexts (pods/plan_pods.mjs, which prints everything it
# does differently from a cluster), and runs them as "pods", each with its own network
# namespace and address on a bridge, its own hostname and mount namespace, names
# resolved by a stand-in for the cluster DNS (pods/cluster_dns.mjs), as the pod's
# non-root user:
#   - the coordinator StatefulSet's pod; its gRPC startup, liveness and readiness probes
#     checked from the node with a gRPC health client (pods/grpc_health_check.cc);
#   - the pool MPIJob's two worker pods and, once they are Ready (WaitForWorkersReady),
#     its launcher, with the MPI Operator's hostfile and environment. Open MPI runs over
#     TCP between the pods; the launcher reaches the workers by their DNS names through
#     an rsh agent (pods/rsh_agent.mjs) that stands in for ssh, talking to a stand-in for
#     the workers' sshd (pods/sshd_standin.mjs) on the ssh port;
#   - the `helm test` Job's pod (`gantry jobs` through the coordinator Service).
# A small "kubelet" restarts containers as their restartPolicy says (the launcher up to
# the MPIJob's backoffLimit). Then, with the CLI from the node:
#   1. a DCGAN job trains on the pool to SUCCEEDED;
#   2. a second job is interrupted once it has a checkpoint by killing every process of
#      worker 1's namespace: the group dies, the kubelet restarts the worker and the
#      launcher, the coordinator requeues the job when the lease runs out, and the
#      restarted group resumes it from its checkpoint to SUCCEEDED.
#
#   tests/helm/pods_test.sh CHART_DIR BIN_DIR GRPC_HEALTH_CHECK
#
# BIN_DIR holds gantry, gantry-coordinator and gantry-worker (they stand for the images'
# /usr/local/bin). The rendered objects are validated as chart_test.sh does: MPIJobs
# against the in-repo schema, and against the operator's CRD too when GANTRY_MPIJOB_CRD
# names its file. Exit 0 passed, 1 failed, 2 bad usage (GANTRY_MPIJOB_CRD naming no file
# among them), 77 skipped with the reason: not root or no network namespaces, no mpirun,
# node or the dataset, or the registry that helm comes from cannot be reached.
# Every wait is bounded, and the whole play stops after GANTRY_PODS_DEADLINE_S (270 s)
# and cleans up (namespaces, processes, the bridge) whatever happened. Set
# GANTRY_PODS_KEEP=1 to keep the work folder (its path is printed).
set -uo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 CHART_DIR BIN_DIR GRPC_HEALTH_CHECK" >&2
  exit 2
fi
chart=$1
bin_dir=$(cd "$2" 2>/dev/null && pwd) || { echo "FAIL: $2: no such folder" >&2; exit 2; }
health_check=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
started_ms=$(date +%s%3N)

readonly RELEASE=gantry-play
readonly NAMESPACE=play
# The one value changed from the defaults: a short lease, so the requeue after a lost
# group takes seconds (the coordinator's e2e tests use 5 as well).
readonly LEASE_SECONDS=5
# The kubelet waits 10 s, doubling, before restarting a failed container; the play 1 s.
readonly RESTART_DELAY_S=1
readonly DEADLINE_S=${GANTRY_PODS_DEADLINE_S:-270}
# Job 1: 4 steps. Job 2: 2 epochs of 32 steps, a checkpoint every 4 steps, so there is
# much left to do after the first checkpoint, whatever the machine's speed.
readonly FIRST_JOB=(--limit-images 128 --batch-size 32 --epochs 1)
readonly SECOND_JOB=(--limit-images 1024 --batch-size 32 --epochs 2 --checkpoint-every-steps 4)

skip() { echo "SKIPPED: $*"; exit 77; }

# --- What the play needs ----------------------------------------------------------
[[ -f $chart/Chart.yaml ]] || { echo "FAIL: $chart: no Chart.yaml" >&2; exit 2; }
for program in gantry gantry-coordinator gantry-worker; do
  [[ -x $bin_dir/$program ]] || { echo "FAIL: $bin_dir/$program: not built" >&2; exit 2; }
done
[[ -x $health_check ]] || { echo "FAIL: $health_check: not built" >&2; exit 2; }
if [[ -n ${GANTRY_MPIJOB_CRD:-} && ! -f $GANTRY_MPIJOB_CRD ]]; then
  echo "FAIL: GANTRY_MPIJOB_CRD=$GANTRY_MPIJOB_CRD: no such file; give the path of the MPI Operator's kubeflow.org_mpijobs.yaml, or unset it" >&2
  exit 2
fi
[[ $(id -u) == 0 ]] || skip "not root: network namespaces, mounts and the pods' users need root (CAP_NET_ADMIN, CAP_SYS_ADMIN)"
for program in ip unshare setpriv mount hostname node mpirun orted timeout; do
  command -v "$program" >/dev/null || skip "$program is not installed"
done
[[ -d /usr/share/datasets/fashion-mnist ]] ||
  skip "/usr/share/datasets/fashion-mnist is missing (apt-get install dataset-fashion-mnist), the jobs' data"
probe_ns=gantry-pods-probe-$$
if ! ip netns add "$probe_ns" 2>/tmp/gantry-pods-probe.$$; then
  reason=$(cat /tmp/gantry-pods-probe.$$)
  rm -f /tmp/gantry-pods-probe.$$
  skip "cannot create a network namespace (ip netns add: $reason)"
fi
probe_ok=1
ip link add "gpp$$" type veth peer name eth0 netns "$probe_ns" 2>/tmp/gantry-pods-probe.$$ || probe_ok=0
ip netns exec "$probe_ns" unshare --uts --mount --propagation private true 2>>/tmp/gantry-pods-probe.$$ || probe_ok=0
ip link del "gpp$$" 2>/dev/null
ip netns del "$probe_ns"
if [[ $probe_ok == 0 ]]; then
  reason=$(cat /tmp/gantry-pods-probe.$$)
  rm -f /tmp/gantry-pods-probe.$$
  skip "cannot make veth pairs or UTS and mount namespaces: $reason"
fi
rm -f /tmp/gantry-pods-probe.$$

tools=$(bash "$here/fetch_tools.sh")
case $? in
  0) ;;
  77) skip "helm or the validators could not be fetched (reason above)" ;;
  *) echo "FAIL: fetch_tools.sh could not make the tools ready (reason above)"; exit 1 ;;
esac
helm=$(sed -n 's/^HELM=//p' <<<"$tools")
modules=$(sed -n 's/^NODE_MODULES=//p' <<<"$tools")

# Each pod mounts its own emptyDir over /tmp, which hides everything under /tmp from the
# pod's processes: the play's folder, the programs and the pod scripts must lie elsewhere.
# A checkout or a build under /tmp (a clone made with mktemp, say) is staged into the
# play's folder, which is then made under /var/tmp.
under_tmp() { [[ $1 == /tmp || $1 == /tmp/* ]]; }
work_parent=$(realpath "${GANTRY_PODS_WORK_PARENT:-$PWD}")
if under_tmp "$work_parent"; then work_parent=/var/tmp; fi
work=$(mktemp -d "$work_parent/pods-play.XXXXXX") || exit 1
chmod 0755 "$work"
if under_tmp "$bin_dir"; then
  mkdir "$work/programs"
  cp "$bin_dir/gantry" "$bin_dir/gantry-coordinator" "$bin_dir/gantry-worker" "$work/programs/" || exit 1
  bin_dir=$work/programs
fi
pods_dir=$here/pods
if under_tmp "$pods_dir"; then
  cp -r "$pods_dir" "$work/pod-scripts" || exit 1
  pods_dir=$work/pod-scripts
fi
netns_prefix=gantry-pods-$$
bridge=gpb$$
declare -A netns=() kubelet_pid=()
failed=0
passed=0

# --- Clean-up, even on failure or interruption --------------------------------------
show_logs() {
  for log in "$work"/pods/*/log; do
    [[ -f $log ]] || continue
    echo "---- $(basename "$(dirname "$log")") (last 25 lines)"
    tail -n 25 "$log"
  done
}

kill_namespaces() {
  for ns in "${netns[@]}"; do
    # shellcheck disable=SC2046
    kill -9 $(ip netns pids "$ns" 2>/dev/null) 2>/dev/null
  done
}

cleanup() {
  local status=$?
  # Nothing may stop the clean-up half-way.
  trap - EXIT
  trap '' INT TERM
  touch "$work/stop"
  pkill -P "$watchdog" 2>/dev/null  # its sleep; it then ends without a word
  for pid in "${kubelet_pid[@]}"; do kill "$pid" 2>/dev/null; done
  kill_namespaces
  for pid in "${kubelet_pid[@]}"; do wait "$pid" 2>/dev/null; done
  kill_namespaces  # a container a kubelet was starting as it was stopped
  for ns in "${netns[@]}"; do ip netns del "$ns" 2>/dev/null; done
  ip link del "$bridge" 2>/dev/null
  if [[ $status -ne 0 ]]; then show_logs; fi
  if [[ ${GANTRY_PODS_KEEP:-0} == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The whole play's deadline, inside CTest's TIMEOUT (300 s), so that the clean-up above
# always runs: SIGTERM to the script, then to its children (this one among them), which
# ends the command the script waits for (bash runs a trap only once that returns).
( sleep "$DEADLINE_S" || exit 0  # the clean-up stopped this sleep: nothing to do
  echo "FAIL the play ran past its $DEADLINE_S s deadline"
  kill -TERM $$
  pkill -TERM -P $$ ) &
watchdog=$!

pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
# Stops the test: what follows depends on this.
fatal() { echo "FAIL $1"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
elapsed() { local ms=$(($(date +%s%3N) - started_ms)); printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)); }

# wait_for SECONDS COMMAND...: true once COMMAND succeeds, false after SECONDS. It tries
# every POLL_S seconds (0.2 unless set).
wait_for() {
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    (($(date +%s) >= deadline)) && return 1
    sleep "${POLL_S:-0.2}"
  done
}

# --- Render, validate, plan ---------------------------------------------------------
rendered=$work/rendered.yaml
"$helm" template "$RELEASE" "$chart" --namespace "$NAMESPACE" --api-versions kubeflow.org/v2beta1/MPIJob \
  --set "coordinator.leaseSeconds=$LEASE_SECONDS" >"$rendered" 2>"$work/helm.err" ||
  fatal "helm template: $(cat "$work/helm.err")"
echo "rendered with helm $("$helm" version --short): release $RELEASE, namespace $NAMESPACE, coordinator.leaseSeconds=$LEASE_SECONDS"
node "$here/validate/validate.mjs" --modules "$modules" "$rendered" >"$work/validate.out" 2>&1 ||
  fatal "the rendered objects do not match their schemas: $(cat "$work/validate.out")"
if [[ -n ${GANTRY_MPIJOB_CRD:-} ]]; then
  echo "validated: the MPIJob against the in-repo schema and the MPI Operator CRD $GANTRY_MPIJOB_CRD"
else
  echo "validated: the MPIJob against the in-repo schema"
fi
# A /24 for the pods that no route of this machine covers yet (the default route aside).
subnet=""
for try in $(seq 0 40); do
  candidate=10.$((77 + ($$ + try) % 100)).$((($$ + try * 7) % 250))
  if ! ip -4 route show to match "$candidate.1" | grep -qv '^default'; then subnet=$candidate; break; fi
done
[[ -n $subnet ]] || fatal "no free 10.x.y.0/24 for the pods' network"
node "$pods_dir/plan_pods.mjs" --modules "$modules" --rendered "$rendered" --namespace "$NAMESPACE" \
  --work "$work" --bin-dir "$bin_dir" --subnet "$subnet" --node "$(command -v node)" ||
  fatal "the rendered chart cannot be played (above)"
# shellcheck source=/dev/null
source "$work/plan.sh"
mkdir -p "$work/bin"
printf '#!/bin/sh\nexec %q %q --port %q "$@"\n' "$(command -v node)" "$pods_dir/rsh_agent.mjs" "$SSH_PORT" \
  >"$work/bin/rsh-agent"
chmod 0755 "$work/bin/rsh-agent"

# --- The pods' network: a bridge (the node is .1), a veth pair and a namespace each -----
ip link add "$bridge" type bridge || fatal "ip link add $bridge type bridge"
ip addr add "$subnet.1/24" dev "$bridge"
ip link set "$bridge" up
index=0
for pod in "${ALL_PODS[@]}"; do
  # shellcheck source=/dev/null
  ip_of_pod=$(source "$work/pods/$pod/pod.sh" && echo "$IP")
  ns=$netns_prefix-$index
  ip netns add "$ns" || fatal "ip netns add $ns"
  netns[$pod]=$ns
  ip link add "gpv$$x$index" type veth peer name eth0 netns "$ns" || fatal "veth for $pod"
  ip link set "gpv$$x$index" master "$bridge" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$ip_of_pod/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via "$subnet.1"
  index=$((index + 1))
done
# The cluster's DNS, in a namespace of its own as kube-dns is.
ns=$netns_prefix-dns
ip netns add "$ns" || fatal "ip netns add $ns"
netns[cluster-dns]=$ns
ip link add "gpv$$x$index" type veth peer name eth0 netns "$ns" || fatal "veth for the cluster DNS"
ip link set "gpv$$x$index" master "$bridge" up
ip -n "$ns" link set lo up
ip -n "$ns" addr add "$DNS_IP/24" dev eth0
ip -n "$ns" link set eth0 up
cp "$work/dns-records" "$work/dns-zone"
ip netns exec "$ns" node "$pods_dir/cluster_dns.mjs" --records "$work/dns-zone" --listen "$DNS_IP" \
  >"$work/cluster-dns.log" 2>&1 &
disown  # ended with its namespace's processes in cleanup
wait_for 10 grep -q "names on" "$work/cluster-dns.log" || fatal "the cluster DNS did not start: $(cat "$work/cluster-dns.log")"

# The endpoints of the headless Services, played: every 0.5 s, the DNS zone is the
# records that do not depend on readiness and those of the pods whose readiness probe
# passes now (a worker that dies loses its name until it is Ready again).
publish_ready_pods() {
  local pod
  while [[ ! -e $work/stop ]]; do
    cat "$work/dns-records" >"$work/dns-zone.next"
    for pod in "${ALL_PODS[@]}"; do
      if [[ -f $work/pods/$pod/dns-record ]] && probe "$pod" readiness >/dev/null 2>&1; then
        cat "$work/pods/$pod/dns-record" >>"$work/dns-zone.next"
      fi
    done
    if ! cmp -s "$work/dns-zone.next" "$work/dns-zone"; then mv "$work/dns-zone.next" "$work/dns-zone"; fi
    sleep 0.5
  done
}
echo "network: bridge $bridge $subnet.0/24 (the node is $subnet.1), namespaces $netns_prefix-*, DNS $DNS_IP"

# --- The kubelet: starts a pod's container and restarts it per its restartPolicy --------
# Writes POD_DIR/log (the container's output), exits (one code per run) and phase.
kubelet() {
  local pod=$1 dir=$work/pods/$1 rc failures=0
  # shellcheck source=/dev/null
  source "$dir/pod.sh"
  while [[ ! -e $work/stop ]]; do
    echo "==== $(date +%T.%3N) container start" >>"$dir/log"
    ip netns exec "${netns[$pod]}" unshare --uts --mount --propagation private -- \
      bash "$pods_dir/pod_start.sh" "$dir" "$work" >>"$dir/log" 2>&1 </dev/null
    rc=$?
    echo "$rc" >>"$dir/exits"
    echo "==== $(date +%T.%3N) container exit $rc" >>"$dir/log"
    if [[ $RESTART_POLICY == Never || ($RESTART_POLICY == OnFailure && $rc == 0) ]]; then
      [[ $rc == 0 ]] && echo Succeeded >"$dir/phase" || echo Failed >"$dir/phase"
      return
    fi
    if [[ -n $BACKOFF_LIMIT && $rc != 0 ]]; then
      failures=$((failures + 1))
      if ((failures > BACKOFF_LIMIT)); then echo Failed >"$dir/phase"; return; fi
    fi
    sleep "$RESTART_DELAY_S"
  done
}

start_pod() {
  # Its own stderr holds bash's "Killed" notes about containers killed on purpose.
  kubelet "$1" 2>>"$work/kubelet.log" &
  kubelet_pid[$1]=$!
}

# shellcheck source=/dev/null
pod_var() { (source "$work/pods/$1/pod.sh" && eval "echo \"\$$2\""); }
# How many times the pod's container has ended (the kubelet's log of exits).
runs_ended() { [[ -f $work/pods/$1/exits ]] && wc -l <"$work/pods/$1/exits" || echo 0; }

# probe POD KIND: the pod's KIND probe (startup, liveness, readiness), sent from the node
# to the pod's address as the kubelet sends it, with the probe's timeoutSeconds; true
# when the pod has no such probe.
probe() {
  local pod=$1 kind=$2 line ip timeout_s type port service
  line=$(grep "^$kind " "$work/pods/$pod/probes") || return 0
  read -r _ timeout_s _ type port service <<<"$line"
  ip=$(pod_var "$pod" IP)
  case $type in
    grpc) "$health_check" "$ip:$port" "$service" --timeout "$timeout_s" ;;
    tcp) timeout "$timeout_s" bash -c "exec 3<>/dev/tcp/$ip/$port" ;;
  esac
}
# The seconds a KIND probe of POD may keep failing (periodSeconds x failureThreshold).
probe_budget() { grep "^$2 " "$work/pods/$1/probes" | cut -d' ' -f3; }

gantry() { GANTRY_COORDINATOR=$COORDINATOR_IP:${SERVICE_ADDRESS##*:} GANTRY_TOKEN=$TOKEN "$bin_dir/gantry" "$@"; }
json() { node -e "const j=JSON.parse(require('fs').readFileSync(0,'utf8')); const v=($1); \
  console.log(typeof v === 'string' ? v : JSON.stringify(v))"; }
job_field() { gantry --json status "$1" 2>/dev/null | json "$2"; }

publish_ready_pods 2>>"$work/kubelet.log" &
kubelet_pid[endpoints]=$!

# --- 1. The coordinator and its probes ----------------------------------------------
start_pod "$COORDINATOR_POD"
# Started within the startup probe's budget, or the kubelet would have killed it.
startup_s=$(probe_budget "$COORDINATOR_POD" startup)
wait_for "${startup_s:-30}" probe "$COORDINATOR_POD" startup ||
  fatal "$COORDINATOR_POD: the startup probe did not pass within its ${startup_s:-30} s"
pass "$COORDINATOR_POD: started; startup probe passed ($(elapsed) s since start)"
for kind in liveness readiness; do
  if out=$(probe "$COORDINATOR_POD" "$kind" 2>&1); then
    pass "$COORDINATOR_POD: $kind probe, no token: $out"
  else
    fail "$COORDINATOR_POD: $kind probe: $out"
  fi
done
if out=$("$health_check" "$COORDINATOR_IP:${SERVICE_ADDRESS##*:}" no.such.Service --timeout 2 2>&1); then
  fail "the health client reports SERVING for an unknown service: $out"
elif [[ $out == *"code 5"* ]]; then
  pass "the health client fails for an unknown service (NOT_FOUND)"
else
  fail "the health client, unknown service: expected NOT_FOUND (code 5): $out"
fi

# --- 2. The pool: workers, then (once Ready) the launcher ---------------------------
for pod in "${WORKER_PODS[@]}"; do start_pod "$pod"; done
for pod in "${WORKER_PODS[@]}"; do
  wait_for 30 probe "$pod" readiness || fatal "$pod: not Ready in 30 s (readiness probe on port $SSH_PORT)"
done
pass "workers Ready (tcpSocket probe on port $SSH_PORT): ${WORKER_PODS[*]}"
start_pod "$LAUNCHER_POD"
group_up() {
  gantry --json groups | json "j.groups.filter(g => g.name === '$GROUP_NAME' && g.world_size === 2)
    .map(g => g.hosts.slice().sort().join(' '))[0] ?? ''" | grep -qx "${WORKER_PODS[*]}"
}
if wait_for 60 group_up; then
  pass "the launcher's mpirun started group $GROUP_NAME: 2 ranks on hosts ${WORKER_PODS[*]}"
else
  gantry groups
  fatal "group $GROUP_NAME with ranks on ${WORKER_PODS[*]} did not register in 60 s"
fi

# --- 3. helm test: `gantry jobs` in a pod of its own, through the Service --------------
start_pod "$TEST_POD"
if wait_for 40 test -f "$work/pods/$TEST_POD/phase" && [[ $(cat "$work/pods/$TEST_POD/phase") == Succeeded ]]; then
  pass "helm test pod $TEST_POD: gantry jobs via $SERVICE_ADDRESS with the Secret's token"
else
  fail "helm test pod $TEST_POD did not succeed: $(tail -n 5 "$work/pods/$TEST_POD/log")"
fi

# --- 4. A job trains to SUCCEEDED -----------------------------------------------------
first=$(gantry --json submit --dataset fashion-mnist --world-size 2 "${FIRST_JOB[@]}" --name pods-first | json j.id) ||
  fatal "gantry submit (first job)"
if out=$(gantry watch "$first" --for 120 2>&1); then
  pass "$first (${FIRST_JOB[*]}) SUCCEEDED on the pods ($(elapsed) s since start)"
else
  fail "$first did not succeed: $out"
fi
if [[ -f $RUNS_DIR/$first/epochs.csv && $(wc -l <"$RUNS_DIR/$first/epochs.csv") == 2 ]]; then
  pass "$first: its run folder is in the shared runs volume, epochs.csv with one epoch"
else
  fail "$first: no epochs.csv of one epoch in $RUNS_DIR/$first"
fi

# --- 5. A worker pod killed mid-run: requeued, resumed from its checkpoint ------------
second=$(gantry --json submit --dataset fashion-mnist --world-size 2 "${SECOND_JOB[@]}" --name pods-resumed | json j.id) ||
  fatal "gantry submit (second job)"
has_checkpoint() { compgen -G "$RUNS_DIR/$second/checkpoints/ckpt-*.bin" >/dev/null; }
# Looked for often: the sooner the kill, the more of the job is left to resume.
POLL_S=0.05 wait_for 120 has_checkpoint || fatal "$second: no checkpoint in $RUNS_DIR/$second/checkpoints after 120 s"
victim=${WORKER_PODS[1]}
launcher_runs=$(runs_ended "$LAUNCHER_POD")
victim_runs=$(runs_ended "$victim")
# shellcheck disable=SC2046
kill -9 $(ip netns pids "${netns[$victim]}")
checkpoints=$(compgen -G "$RUNS_DIR/$second/checkpoints/ckpt-*.bin" | xargs -n1 basename | tr '\n' ' ')
state=$(job_field "$second" j.state)
echo "killed every process of $victim's namespace; checkpoints then: $checkpoints; job state: $state"
[[ $state == JOB_STATE_RUNNING ]] || fatal "$second was $state when the worker was killed, not running"
both_restarted() { (($(runs_ended "$LAUNCHER_POD") > launcher_runs && $(runs_ended "$victim") > victim_runs)); }
if wait_for 30 both_restarted; then
  pass "the group died with the worker: the launcher's mpirun failed and the kubelet restarted it and $victim"
else
  fail "after the kill: launcher runs $(runs_ended "$LAUNCHER_POD") (was $launcher_runs), $victim runs $(runs_ended "$victim")"
fi
if out=$(gantry watch "$second" --for 180 2>&1); then
  pass "$second (${SECOND_JOB[*]}) SUCCEEDED after the kill ($(elapsed) s since start)"
else
  fail "$second did not succeed after the kill: $out"
fi
if [[ $out == *"requeued after attempt 1 of"* ]]; then
  pass "$second was requeued after its group was lost"
else
  fail "$second: gantry watch does not say it was requeued: $out"
fi
attempts=$(job_field "$second" j.attempts)
run_log=$(cat "$RUNS_DIR/$second/log.txt" 2>/dev/null)
if [[ $attempts == 2 && $run_log == *"$second (attempt 2 of"*"resuming from its newest checkpoint"* &&
      ! -e $RUNS_DIR/$second.attempt-2 ]]; then
  pass "$second resumed from its checkpoint on the restarted group: $(grep -o 'resuming at [^)]*)' <<<"$run_log" | head -n 1)"
else
  fail "$second did not resume from its checkpoint (attempts $attempts): $(tail -n 5 <<<"$run_log")"
fi
csv=$RUNS_DIR/$second/epochs.csv
if [[ -f $csv && $(wc -l <"$csv") == 3 && $(gantry report --csv "$second") == "$(cat "$csv")" ]]; then
  pass "$second: epochs.csv has each of its 2 epochs once, as the coordinator's report"
else
  fail "$second: epochs.csv is not header + 2 epochs matching gantry report --csv: $(cat "$csv" 2>/dev/null)"
fi

echo "$passed passed, $failed failed in $(elapsed) s"
[[ $failed -eq 0 ]]
