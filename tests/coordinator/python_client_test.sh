#!/usr/bin/env bash
# The API is language-neutral: Python stubs generated from proto/ with Debian's
# python3-grpc-tools list the jobs a real gantry-coordinator holds.
# Usage: python_client_test.sh COORDINATOR_BIN GANTRY_BIN PROTO_DIR LIST_JOBS_PY
# Fails, saying what to install, when /usr/bin/python3 lacks grpc_tools or grpc.
set -euo pipefail
coordinator_bin=$1 gantry_bin=$2 proto_dir=$3 client=$4

if ! /usr/bin/python3 -c "import grpc, grpc_tools" 2>/dev/null; then
  echo "FAIL: /usr/bin/python3 has no grpc_tools/grpc; apt-get install python3-grpc-tools (scripts/install_deps.sh)"
  exit 1
fi

work=$(mktemp -d)
coordinator_pid=""
cleanup() {
  if [[ -n $coordinator_pid ]]; then kill "$coordinator_pid" 2>/dev/null || true; wait "$coordinator_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Stubs, into the scratch folder (never the source tree).
well_known=$(/usr/bin/python3 -c "import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), '_proto'))")
mkdir -p "$work/gen"
/usr/bin/python3 -m grpc_tools.protoc -I "$proto_dir" -I "$well_known" --python_out="$work/gen" \
  --grpc_python_out="$work/gen" "$proto_dir"/gantry/v1/*.proto

mkdir -p "$work/data/mnist"
token=py0123456789abcdef0123456789
echo "$token" > "$work/token"
"$coordinator_bin" --listen 127.0.0.1:0 --db "$work/gantry.db" --data-root "$work/data" \
  --token-file "$work/token" --port-file "$work/port" > "$work/coordinator.log" 2>&1 &
coordinator_pid=$!
for _ in $(seq 200); do [[ -s $work/port ]] && break; sleep 0.05; done
[[ -s $work/port ]] || { cat "$work/coordinator.log"; echo "FAIL: coordinator did not start"; exit 1; }
address=127.0.0.1:$(cat "$work/port")

gantry() { timeout 30 "$gantry_bin" --coordinator "$address" --token "$token" --timeout 10 "$@"; }
gantry submit --data-dir "$work/data/mnist" --name first > /dev/null
gantry submit --data-dir "$work/data/mnist" --name second > /dev/null
gantry cancel job-2 > /dev/null

got=$(timeout 30 /usr/bin/python3 "$client" "$work/gen" "$address" "$token")
expected=$'job-1 JOB_STATE_QUEUED\njob-2 JOB_STATE_CANCELLED'
if [[ $got != "$expected" ]]; then
  echo "FAIL: the Python client listed:"; echo "$got"; echo "expected:"; echo "$expected"; exit 1
fi
# Without the token, the Python client is refused too.
if timeout 30 /usr/bin/python3 "$client" "$work/gen" "$address" 2> "$work/refused.txt"; then
  echo "FAIL: a Python call without the token was served"; exit 1
fi
grep -q UNAUTHENTICATED "$work/refused.txt" || { cat "$work/refused.txt"; echo "FAIL: not UNAUTHENTICATED"; exit 1; }
echo "PASS: the Python client listed the coordinator's jobs"
