#!/usr/bin/env bash
# Emulated hosts: N network namespaces on one machine, joined through a bridge by shaped
# veth links, so that gantry's ranks talk over "Ethernet" of a chosen rate instead of
# shared memory. Run as root (namespaces, veth and tc need CAP_NET_ADMIN).
#
#   emulated_hosts.sh up N --rate R [--delay D]   build hosts gantry-h0 .. gantry-h<N-1>
#   emulated_hosts.sh check                       every tbf in place; measure every link (iperf3, ping); fail if the shaping is off
#   emulated_hosts.sh run [--keep] [--output DIR] -- COMMAND...
#                                                 mpirun COMMAND, one rank per host, over the links only;
#                                                 --output: each host's daemon also writes its ranks' output to
#                                                 DIR/1/rank.<r>/std{out,err} (kept even when the host is cut off)
#   emulated_hosts.sh exec I -- COMMAND...        run COMMAND on host I (its network only, its host name):
#                                                 a gantry-coordinator, a pool, the CLI
#   emulated_hosts.sh link-down I | link-up I     cut / restore host I's link (its bridge port)
#   emulated_hosts.sh kill-rank I                 SIGKILL host I's MPI rank(s) (its daemon lives on)
#   emulated_hosts.sh down                        remove everything (succeeds when nothing is up)
#   (emulated_hosts.sh ssh HOST COMMAND is internal: mpirun's launch agent, see cmd_ssh)
#
# Layout. Host i is namespace gantry-h<i> with one interface, eth0, address 10.77.0.<i+1>/24.
# Its veth peer, port h<i>, sits on bridge br0 in a namespace of its own, gantry-br: the
# root namespace gets no interface, address, route or bridge, so the emulation cannot
# disturb the machine's own network (nor its firewall: bridged frames of the root namespace
# may go through iptables via br_netfilter; a fresh namespace has no rules), and `down`
# is the deletion of namespaces named gantry-*, which takes every veth with it.
#
# Shaping. Each link is shaped in both directions at R with tbf: egress of eth0 (host ->
# bridge) and egress of port h<i> (bridge -> host), so a transfer h0 -> h1 meets R twice,
# as it would meet a NIC and a switch port. Delay needs netem (a parent qdisc with tbf
# below it); kernels without sch_netem (as on the machines this was written on) cannot
# emulate delay, jitter or loss: `up` says so and refuses --delay (exit 2); a lost link is
# emulated by link-down instead (the bridge port goes down, so eth0 loses carrier and every
# frame either way is dropped silently, as with a pulled cable or loss 100 %).
#
# Exit codes: 0 success; 1 a failure (named); 2 a usage error or something this kernel
# cannot do. Every wait has a bound.
set -uo pipefail

# GANTRY_HOSTS_NAME (default gantry) names one set of hosts: <name>-h0.., <name>-br, so
# that two sets (a test beside a study) can exist at once; each set is its own network.
# MPIRUN (default mpirun) is the Open MPI launcher `run` uses.
readonly NAME=${GANTRY_HOSTS_NAME:-gantry}
[[ $NAME =~ ^[a-z][a-z0-9-]{0,30}$ ]] || { echo "emulated_hosts: GANTRY_HOSTS_NAME='$NAME' must be [a-z][a-z0-9-]*" >&2; exit 2; }
readonly PREFIX=$NAME-h BRIDGE_NS=$NAME-br SUBNET=10.77.0 STATE=/run/$NAME-emulated-hosts.env MPIRUN=${MPIRUN:-mpirun}
readonly MPI_PIN=(--mca pml ob1 --mca btl "tcp,self" --mca btl_tcp_if_include "$SUBNET.0/24"
                  --mca coll '^sm,han' --mca osc pt2pt --bind-to none)

usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
}
die() { echo "emulated_hosts: $*" >&2; exit 1; }
refuse() { echo "emulated_hosts: $*" >&2; exit 2; }
log() { echo "emulated_hosts: $*" >&2; }

require_root() { (( EUID == 0 )) || refuse "must run as root (namespaces, veth and tc need CAP_NET_ADMIN); try sudo $0 $*"; }

# Runs "$@" inside host namespace $1. Only the network namespace changes (nsenter --net),
# so files, /tmp and Open MPI's session directory stay those of the caller.
in_host() { local ns=$1; shift; nsenter --net="/run/netns/$ns" -- "$@"; }

# The namespaces this script owns, one per line (gantry-h*, gantry-br).
our_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^(${PREFIX}[0-9]+|${BRIDGE_NS}|${NAME}-probe)$"; }

# Reads N and RATE of the hosts that are up from $STATE; fails naming the fix if none are.
load_state() {
  [[ -r $STATE ]] && ip netns list | grep -q "^${PREFIX}0\b" \
    || die "no emulated hosts are up (no $STATE or no ${PREFIX}0): run '$0 up N --rate R' first"
  # shellcheck disable=SC1090  # N, RATE, BITS, DELAY, as cmd_up wrote them
  source "$STATE"
}

# --- rates -----------------------------------------------------------------------------

# Prints rate $1 (tc syntax: 100mbit, 1gbit, 25gbit, 500kbit, 1000000bit) in bit/s;
# fails on anything else.
rate_bits() {
  local r=${1,,} n unit
  [[ $r =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || return 1
  n=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]}
  case $unit in bit) echo "$n" ;; kbit) echo $(( n * 1000 )) ;; mbit) echo $(( n * 1000000 )) ;;
                gbit) echo $(( n * 1000000000 )) ;; esac
}

# tbf for rate $2 (bit/s) on device $1 in namespace $3. The bucket holds 1 ms at the rate
# (at least 64 KiB, so that one GSO super-packet of veth passes whole) and the queue 5 ms
# more: long enough for a TCP window on a sub-millisecond link, short enough not to add
# queueing delay that a real switch would not.
shape() {
  local dev=$1 bits=$2 ns=$3 parent burst
  read -ra parent <<<"${4:-root}"   # "root", or "parent 1:" below netem
  burst=$(( bits / 8 / 1000 )); (( burst < 65536 )) && burst=65536
  in_host "$ns" tc qdisc replace dev "$dev" "${parent[@]}" tbf rate "${bits}bit" burst "$burst" latency 5ms \
    || die "tc tbf at ${bits} bit/s on $dev in $ns failed (is sch_tbf in the kernel?)"
}

# True when the kernel has netem; probed on a throwaway veth in a scratch namespace.
have_netem() {
  local ns=$NAME-probe ok=1
  ip netns add "$ns" 2>/dev/null || return 1
  ip -n "$ns" link add p0 type veth peer name p1 && ip -n "$ns" link set p0 up \
    && ip netns exec "$ns" tc qdisc add dev p0 root netem delay 1ms 2>/dev/null && ok=0
  ip netns del "$ns"
  return $ok
}

# --- up / down -------------------------------------------------------------------------

# Removes every namespace of ours (their veths go with them) and the state file. Bounded:
# each deletion is one syscall; a namespace still held by a process (a rank that ignores
# its end) is unmounted here and freed by the kernel when that process exits.
teardown() {
  local ns
  for ns in $(our_namespaces); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
    ip netns del "$ns" 2>/dev/null || log "could not delete namespace $ns (ip netns del $ns by hand)"
  done
  rm -f "$STATE"
}

cmd_down() {
  require_root down
  teardown
  [[ -z $(our_namespaces) ]] || die "namespaces left: $(our_namespaces | tr '\n' ' ')"
  log "down: no emulated hosts left"
}

# Host i: namespace, eth0 <-> port h<i> on the bridge, address, both directions shaped.
add_host() {
  local i=$1 bits=$2 delay=$3 ns=$PREFIX$1
  ip netns add "$ns" || die "ip netns add $ns failed"
  ip link add eth0 netns "$ns" type veth peer name "h$i" netns "$BRIDGE_NS" \
    || die "creating the veth pair of $ns failed (is the veth driver in the kernel?)"
  ip -n "$ns" addr add "$SUBNET.$(( i + 1 ))/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$BRIDGE_NS" link set "h$i" master br0 up
  if [[ -n $delay ]]; then   # netem on top, tbf below it, both directions
    in_host "$ns" tc qdisc replace dev eth0 root handle 1: netem delay "$delay" || die "netem on $ns failed"
    in_host "$BRIDGE_NS" tc qdisc replace dev "h$i" root handle 1: netem delay "$delay" || die "netem on h$i failed"
    [[ $bits == none ]] || { shape eth0 "$bits" "$ns" "parent 1:"; shape "h$i" "$bits" "$BRIDGE_NS" "parent 1:"; }
  elif [[ $bits != none ]]; then
    shape eth0 "$bits" "$ns"
    shape "h$i" "$bits" "$BRIDGE_NS"
  fi
}

cmd_up() {
  require_root up
  local n=${1:-} rate='' delay='' bits i
  [[ $n =~ ^[0-9]+$ ]] && (( n >= 1 && n <= 64 )) || refuse "up: N must be a number of hosts in [1, 64], got '${n}'"
  shift
  while (( $# )); do
    case $1 in
      --rate) rate=${2:-}; shift 2 || refuse "up: --rate needs a value" ;;
      --delay) delay=${2:-}; shift 2 || refuse "up: --delay needs a value" ;;
      *) refuse "up: unknown argument '$1' (see $0 --help)" ;;
    esac
  done
  [[ -n $rate ]] || refuse "up: --rate R is required (e.g. 1gbit, 10gbit, 25gbit, or none)"
  if [[ $rate == none ]]; then bits=none
  else bits=$(rate_bits "$rate") || refuse "up: --rate '$rate' is not a tc rate such as 100mbit, 1gbit, 25gbit or none"
  fi
  if ! have_netem; then
    log "this kernel has no netem (sch_netem): delay, jitter and loss cannot be emulated;" \
        "links are rate-shaped only (tbf), and a lost link is emulated with link-down"
    [[ -z $delay ]] || refuse "up: --delay $delay needs netem, which this kernel lacks (tc qdisc ... netem:" \
                              "'Specified qdisc kind is unknown'); leave --delay out"
  fi
  command -v nsenter >/dev/null || refuse "nsenter not found (Debian: apt-get install util-linux)"

  local stale; stale=$(our_namespaces | tr '\n' ' ')
  [[ -z $stale ]] && [[ ! -e $STATE ]] || { log "removing stale namespaces from an earlier run: ${stale:-none}"; teardown; }
  trap 'log "up interrupted or failed: tearing down"; teardown' EXIT
  trap 'exit 130' INT TERM

  ip netns add "$BRIDGE_NS" || die "ip netns add $BRIDGE_NS failed"
  ip -n "$BRIDGE_NS" link add br0 type bridge || die "creating bridge br0 failed (is the bridge driver in the kernel?)"
  ip -n "$BRIDGE_NS" link set br0 up
  for (( i = 0; i < n; i++ )); do add_host "$i" "$bits" "$delay"; done
  printf 'N=%d\nRATE=%s\nBITS=%s\nDELAY=%s\n' "$n" "$rate" "$bits" "$delay" >"$STATE"
  wait_reachable "$n"
  trap - EXIT INT TERM
  log "up: $n hosts ${PREFIX}0..$PREFIX$(( n - 1 )) on $SUBNET.0/24, links at $rate${delay:+ with delay $delay}" \
      "(check: $0 check; remove: $0 down)"
}

# Waits (at most 10 s) until every other host reaches h0: a TCP connection to h0's port 9
# (nothing listens there) is refused at once when frames cross the bridge and times out
# when they do not. Needs no ping, which minimal systems lack.
wait_reachable() {
  local n=$1 i t
  for (( i = 1; i < n; i++ )); do
    for (( t = 0; t < 20; t++ )); do
      reaches "$PREFIX$i" "$SUBNET.1" && break
      sleep 0.5
    done
    (( t < 20 )) || die "$PREFIX$i cannot reach ${PREFIX}0 ($SUBNET.1) after 10 s: see ip -n $BRIDGE_NS link"
  done
}

# True when namespace $1 gets an answer (an accept or a refusal) from address $2 within 1 s.
reaches() {
  local out
  out=$(timeout 1 nsenter --net="/run/netns/$1" -- bash -c "exec 3<>/dev/tcp/$2/9" 2>&1) && return 0
  [[ $out == *"Connection refused"* ]]
}

# --- check -----------------------------------------------------------------------------

# Mbit/s that iperf3 measured from namespace $1 to $2 (address), 2 s after a 1 s warm-up
# (-O 1 leaves TCP's slow start out); -R reverses the direction. Bounded by timeout.
iperf_mbits() {
  local from=$1 to=$2; shift 2
  timeout 20 nsenter --net="/run/netns/$from" -- iperf3 -c "$to" -t 2 -O 1 -J --connect-timeout 3000 "$@" \
    | python3 -c 'import json,sys; print("%.0f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))'
}

# Mean ping RTT (ms) from namespace $1 to address $2, 5 pings 0.2 s apart.
rtt_ms() {
  timeout 10 nsenter --net="/run/netns/$1" -- ping -q -c 5 -i 0.2 -W 1 "$2" | awk -F/ '/^rtt/ {print $5}'
}

# Prints one line per link end that lacks a tbf at the asked rate. A transfer between h0
# and host I meets four tbfs (two per link), so iperf3 alone would not notice one that
# is missing: the others still hold the rate.
unshaped_links() {
  [[ $BITS == none ]] && return 0
  local i ns dev rate ns_dev
  for (( i = 0; i < N; i++ )); do
    for ns_dev in "$PREFIX$i eth0" "$BRIDGE_NS h$i"; do
      read -r ns dev <<<"$ns_dev"
      rate=$(in_host "$ns" tc -j qdisc show dev "$dev" \
               | python3 -c 'import json,sys; print(" ".join(str(q["options"]["rate"] * 8) for q in json.load(sys.stdin) if q["kind"] == "tbf"))')
      [[ $rate == "$BITS" ]] || echo "$dev in $ns: ${rate:+a tbf at $rate bit/s}${rate:-no tbf}, not $BITS bit/s ($RATE):" \
                                     "the shaping was removed or changed (rerun $0 up)"
    done
  done
}

cmd_check() {
  require_root check
  load_state
  command -v iperf3 >/dev/null || refuse "iperf3 not found (Debian: apt-get install -y iperf3)"
  (( N >= 2 )) || { log "check: one host has no link to measure"; return 0; }
  in_host "${PREFIX}0" iperf3 -s -D -I "/run/$NAME-iperf3.pid" || die "could not start iperf3 -s in ${PREFIX}0"
  trap 'kill "$(cat "/run/$NAME-iperf3.pid" 2>/dev/null)" 2>/dev/null; rm -f "/run/$NAME-iperf3.pid"' EXIT
  sleep 0.5
  local i dir mbits rtt bad=() lo hi
  if [[ $BITS != none ]]; then lo=$(( BITS * 8 / 10 / 1000000 )) hi=$(( BITS * 12 / 10 / 1000000 )); fi
  mapfile -t bad < <(unshaped_links)
  printf '| link | asked | measured Mbit/s | rtt ms |\n|---|---|---:|---:|\n'
  for (( i = 1; i < N; i++ )); do
    rtt=$(rtt_ms "$PREFIX$i" "$SUBNET.1")
    for dir in up down; do
      if [[ $dir == up ]]; then mbits=$(iperf_mbits "$PREFIX$i" "$SUBNET.1")
      else mbits=$(iperf_mbits "$PREFIX$i" "$SUBNET.1" -R); fi
      local pair="h$i -> h0"; [[ $dir == down ]] && pair="h0 -> h$i"
      printf '| %s | %s | %s | %s |\n' "$pair" "$RATE" "${mbits:-failed}" "${rtt:-failed}"
      if [[ -z $mbits ]]; then bad+=("$pair: iperf3 failed (is the link down? $0 link-up $i)")
      elif [[ $BITS != none ]] && (( mbits < lo || mbits > hi )); then
        bad+=("$pair: $mbits Mbit/s is outside [$lo, $hi] (80-120 % of $RATE): the shaping is not in effect or the machine cannot drive this rate")
      fi
    done
    [[ -n $rtt ]] || bad+=("h$i <-> h0: no ping reply within 1 s")
  done
  (( ${#bad[@]} == 0 )) || { printf 'emulated_hosts: check FAILED: %s\n' "${bad[@]}" >&2; exit 1; }
  if [[ $BITS == none ]]; then log "check: links unshaped (--rate none): the rates above are the machine's own"
  else log "check: every link shaped and within 80-120 % of $RATE"; fi
}

# --- run -------------------------------------------------------------------------------

# The launch agent of `run` (Open MPI's plm_rsh_agent, in place of ssh): mpirun calls
# `emulated_hosts.sh ssh HOST COMMAND...` to start its daemon (orted) on HOST. The daemon
# gets HOST's network namespace and a UTS namespace of its own named HOST, so that Open MPI
# sees N distinct nodes, as on N machines: each daemon serves its ranks over PMIx on its
# own loopback (PMIx 4 speaks TCP, which a namespace's loopback confines to that host),
# and the daemons reach mpirun (in gantry-h0) over the links.
cmd_ssh() {
  local host=${1:-}; shift || true
  [[ $host =~ ^${PREFIX}[0-9]+$ && -e /run/netns/$host ]] || die "ssh: no emulated host '$host' (is it up?)"
  exec unshare --uts -- nsenter --net="/run/netns/$host" -- bash -c "hostname $host && $*"
}

# The host list of mpirun, one slot each: gantry-h0,gantry-h1,...
host_list() { local i out=${PREFIX}0; for (( i = 1; i < N; i++ )); do out+=",$PREFIX$i"; done; echo "$out"; }

cmd_run() {
  require_root run
  local keep=0 output=()
  while (( $# )) && [[ $1 != -- ]]; do
    case $1 in
      --keep) keep=1; shift ;;
      --output) [[ -n ${2:-} ]] || refuse "run: --output needs a folder"; output=(--output-filename "$(realpath -m "$2")"); shift 2 ;;
      *) refuse "run: unknown argument '$1' (usage: run [--keep] [--output DIR] -- COMMAND...)" ;;
    esac
  done
  [[ ${1:-} == -- ]] && shift
  (( $# )) || refuse "run: no COMMAND (usage: run [--keep] [--output DIR] -- COMMAND...)"
  load_state
  # mpirun itself runs on host 0, as one would start it on the first machine.
  local line=(nsenter --net="/run/netns/${PREFIX}0" -- "$MPIRUN" --allow-run-as-root -np "$N" --host "$(host_list)"
              --mca plm_rsh_agent "$(realpath "$0") ssh" --mca oob_tcp_if_include "$SUBNET.0/24" "${MPI_PIN[@]}" "${output[@]}" "$@")
  log "run: ${line[*]}"
  local before code; before=$(link_bytes)
  # mpirun in the background, so that an interrupt runs the trap at once (bash defers traps
  # while a foreground child runs): mpirun gets SIGTERM and 10 s to end its ranks, then
  # the teardown (unless --keep) kills whatever is left in the namespaces (mpirun
  # included: it is in h0).
  (( keep )) || trap 'teardown' EXIT
  "${line[@]}" &
  local pid=$!
  trap 'stop_job '"$pid"'; exit 130' INT TERM
  wait "$pid"; code=$?
  report_traffic "$before" "$(link_bytes)"
  return "$code"
}

# One line per host: I, bytes its eth0 sent, bytes it received (the namespace's own
# /proc/net/dev): eth0 is a host's only link, so this counts what crossed the links.
link_bytes() {
  local i
  for (( i = 0; i < N; i++ )); do
    in_host "$PREFIX$i" awk -v i="$i" '{ sub(/^ +/, "") } /^eth0:/ { sub(/^eth0: */, ""); split($0, f, / +/); print i, f[9], f[1] }' /proc/net/dev
  done
}

# Prints what each host sent and received over its link between two link_bytes outputs,
# the proof that the job's traffic took the links (and not shared memory or loopback).
report_traffic() {
  join <(echo "$1") <(echo "$2") | while read -r i s0 g0 s1 g1; do
    log "traffic of $PREFIX$i over its link during the run: sent $(( (s1 - s0) / 1000000 )) MB," \
        "received $(( (g1 - g0) / 1000000 )) MB"
  done
}

# Sends mpirun ($1) SIGTERM and waits at most 10 s for it to end.
stop_job() {
  local t
  kill -TERM "$1" 2>/dev/null
  for (( t = 0; t < 50; t++ )); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.2; done
  log "mpirun (pid $1) did not end within 10 s of SIGTERM; the teardown kills it"
}

# --- faults ----------------------------------------------------------------------------

host_index() {
  [[ ${1:-} =~ ^[0-9]+$ ]] || refuse "a host index I is required, e.g. 1"
  load_state
  (( $1 < N )) || refuse "host $1 does not exist (hosts 0..$(( N - 1 )) are up)"
}

cmd_link() {
  require_root "link-$1"
  host_index "${2:-}"
  ip -n "$BRIDGE_NS" link set "h$2" "$1" || die "ip -n $BRIDGE_NS link set h$2 $1 failed"
  log "link of $PREFIX$2 $1 (bridge port h$2)"
}

# Runs COMMAND as a process of host $1: its network namespace (files stay the caller's,
# as for the ranks) and a UTS namespace of its own named after the host, so that what it
# reports as its host (a pool's checkpoint references, its logs) tells the hosts apart.
cmd_exec() {
  require_root exec
  host_index "${1:-}"
  local host=$PREFIX$1; shift
  [[ ${1:-} == -- ]] && shift
  (( $# )) || refuse "exec: no COMMAND (usage: exec I -- COMMAND...)"
  # shellcheck disable=SC2016  # $0 and $@ belong to the inner bash
  exec unshare --uts -- nsenter --net="/run/netns/$host" -- bash -c 'hostname "$0" && exec "$@"' "$host" "$@"
}

cmd_kill_rank() {
  require_root kill-rank
  host_index "${1:-}"
  local pid pids=()
  for pid in $(ip netns pids "$PREFIX$1"); do   # the rank(s), not the host's orted
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q '^OMPI_COMM_WORLD_RANK=' && pids+=("$pid")
  done
  (( ${#pids[@]} )) || die "no MPI rank runs in $PREFIX$1 (is the job still running?)"
  kill -KILL "${pids[@]}" && log "kill-rank: SIGKILL to the rank process(es) of $PREFIX$1: ${pids[*]}"
}

main() {
  local cmd=${1:-}; shift || true
  case $cmd in
    up) cmd_up "$@" ;;
    down) cmd_down ;;
    check) cmd_check ;;
    run) cmd_run "$@" ;;
    ssh) cmd_ssh "$@" ;;
    exec) cmd_exec "$@" ;;
    link-down) cmd_link down "$@" ;;
    link-up) cmd_link up "$@" ;;
    kill-rank) cmd_kill_rank "$@" ;;
    -h|--help|help|'') usage ;;
    *) refuse "unknown command '$cmd' (see $0 --help)" ;;
  esac
}

main "$@"
