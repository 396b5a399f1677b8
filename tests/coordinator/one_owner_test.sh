#!/usr/bin/env bash
# One process owns a job database, and a start checks that it can write there (issue 45):
#  1. a second gantry-coordinator on the --db of a running one (by the same path, and by
#     another spelling of it: a symbolic link) is refused, exit 2, naming the holder's pid
#     and address, and the first one serves on;
#  2. once the first has ended (even by SIGKILL), a new one starts on that --db;
#  3. as root: a --db on a full filesystem (a small tmpfs filled to the brim, or with
#     less than the 1 MiB a coordinator reserves at start) is refused, exit 2, naming
#     --db and the full disk (skipped without root or mount).
# Usage: one_owner_test.sh COORDINATOR_BIN
set -euo pipefail
coordinator_bin=$1

work=$(mktemp -d)
pids=()
mounted=""
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  [[ -z $mounted ]] || umount "$mounted" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$work/data"
# start NAME DB: a coordinator on port 0 in the background; its pid in $started.
start() {
  "$coordinator_bin" --listen 127.0.0.1:0 --db "$2" --data-root "$work/data" --port-file "$work/$1.port" \
    >"$work/$1.log" 2>&1 &
  started=$!
  pids+=("$started")
}
wait_port() {
  for _ in $(seq 300); do [[ -s $work/$1.port ]] && return 0; sleep 0.05; done
  cat "$work/$1.log"
  fail "coordinator $1 did not start"
}

# 1. The holder, then a second on the same database by two spellings.
start first "$work/gantry.db"
first_pid=$started
wait_port first
port=$(cat "$work/first.port")
ln -s "$work/gantry.db" "$work/alias.db"
for db in "$work/gantry.db" "$work/alias.db" "$work/./data/../gantry.db"; do
  set +e
  timeout 30 "$coordinator_bin" --listen 127.0.0.1:0 --db "$db" --data-root "$work/data" >"$work/second.log" 2>&1
  rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$work/second.log"; fail "a second coordinator on $db: exit $rc, expected 2"; }
  grep -q "is in use by another gantry-coordinator (pid $first_pid, address 127.0.0.1:$port" "$work/second.log" ||
    { cat "$work/second.log"; fail "the refusal does not name the holder (pid $first_pid, 127.0.0.1:$port)"; }
done
kill -0 "$first_pid" || fail "the first coordinator did not survive the second's start"
grep -q "error\|refused" "$work/first.log" && { cat "$work/first.log"; fail "the first coordinator logged an error"; }

# 2. The lock ends with its holder, however it ends.
kill -9 "$first_pid"
wait "$first_pid" 2>/dev/null || true
start third "$work/gantry.db"
wait_port third
kill -TERM "$started"
wait "$started" || fail "the third coordinator did not stop cleanly"

# 3. A full filesystem.
if [[ $(id -u) != 0 ]] || ! mkdir -p "$work/full" || ! mount -t tmpfs -o size=2m tmpfs "$work/full" 2>/dev/null; then
  echo "skipped the full-filesystem case (needs root and mount)"
  echo PASS
  exit 0
fi
mounted=$work/full
# refused_full DB WHY: a start on DB is refused, exit 2, naming --db and the full disk.
refused_full() {
  set +e
  timeout 30 "$coordinator_bin" --listen 127.0.0.1:0 --db "$1" --data-root "$work/data" >"$work/full.log" 2>&1
  local rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$work/full.log"; fail "$2: exit $rc, expected 2"; }
  grep -q -- "--db $1" "$work/full.log" && grep -q "disk is full" "$work/full.log" ||
    { cat "$work/full.log"; fail "$2: the refusal does not name --db and the full disk"; }
}
# A database stopped cleanly, then the disk filled to the brim (SQLite then fails to
# grow its -shm and said "cannot be read (disk I/O error)").
start full "$work/full/gantry.db"
wait_port full
kill -TERM "$started"
wait "$started" || true
head -c 4m /dev/zero >"$work/full/filler" 2>/dev/null || true
refused_full "$work/full/gantry.db" "an existing database on a full filesystem"
# A new database with 200 KiB left: SQLite's start fits, but not a coordinator's work
# (it served, then failed its writes).
rm -f "$work/full/filler" "$work/full/gantry.db"*
head -c $((2048 * 1024 - 200 * 1024)) /dev/zero >"$work/full/filler"
refused_full "$work/full/new.db" "a new database with 200 KiB left"
echo PASS
