#!/usr/bin/env bash
# The Helm chart, checked offline (no cluster can be reached here):
#   1. `helm lint --strict` and `helm template` with the default values and every
#      helm/gantry/ci/*-values.yaml;
#   2. every rendered object validated (validate/validate.mjs): built-in kinds against
#      the kubernetes-models schemas, MPIJobs against the in-repo MPIJob schema
#      (validate/mpijob_v2beta1_schema.yaml, unknown fields refused) and the operator's
#      own rules, and also against the MPI Operator's CRD when one is given (below);
#   3. every flag the templates pass to gantry-coordinator, gantry-worker and gantry
#      looked up in that binary's --help (for the binaries given);
#   4. what the chart must refuse, refused with a message saying why (no MPI Operator,
#      replicas 0, a misspelled key, a name too long for a DNS label, ...);
#   5. the validator itself refusing a broken MPIJob and StatefulSet (so step 2 can fail),
#      the in-repo schema alone refusing an unknown field and values outside its enums,
#      and, with a CRD, a schema that disagrees with the CRD reported as such.
#
#   tests/helm/chart_test.sh CHART_DIR [NAME=BINARY...]
#
# GANTRY_MPIJOB_CRD=PATH (optional): the operator's CRD file, kubeflow.org_mpijobs.yaml of
# a kubeflow/mpi-operator release (manifests/base/ in its repository). With it the
# rendered MPIJobs are also validated against the CRD's own schema, and the in-repo
# schema is compared with it. CMake passes -DGANTRY_MPIJOB_CRD=PATH through.
#
# helm and the validators come from the npm registry (fetch_tools.sh: pinned versions,
# checksums verified, cached outside the repository). Exit 0 all passed, 1 a check
# failed, 2 bad usage (GANTRY_MPIJOB_CRD naming no file among them), 77 skipped (the
# reason is printed): the registry cannot be reached.
set -uo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 CHART_DIR [gantry=BIN gantry-coordinator=BIN gantry-worker=BIN]" >&2
  exit 2
fi
chart=$1
shift
binaries=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
crd=${GANTRY_MPIJOB_CRD:-}

[[ -f $chart/Chart.yaml ]] || { echo "FAIL: $chart: no Chart.yaml" >&2; exit 1; }
if [[ -n $crd && ! -f $crd ]]; then
  echo "GANTRY_MPIJOB_CRD=$crd: no such file; give the path of the MPI Operator's kubeflow.org_mpijobs.yaml, or unset it to check against the in-repo schema alone" >&2
  exit 2
fi

tools=$(bash "$here/fetch_tools.sh")
case $? in
  0) ;;
  77) echo "SKIPPED: helm or the validators could not be fetched (reason above)"; exit 77 ;;
  *) echo "FAIL: fetch_tools.sh could not make the tools ready (reason above)"; exit 1 ;;
esac
helm=$(sed -n 's/^HELM=//p' <<<"$tools")
modules=$(sed -n 's/^NODE_MODULES=//p' <<<"$tools")
echo "helm: $("$helm" version --short)"
if [[ -n $crd ]]; then
  echo "MPIJobs: the in-repo schema and the operator's CRD $crd"
else
  echo "MPIJobs: the in-repo schema (set GANTRY_MPIJOB_CRD to the operator's CRD file to check against it too)"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
MPI=(--api-versions kubeflow.org/v2beta1/MPIJob)

pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; sed 's/^/    /' "$work/out" | head -n 20; failed=$((failed + 1)); }

# expect_ok NAME COMMAND...: the command must succeed.
expect_ok() {
  local name=$1
  shift
  if "$@" >"$work/out" 2>&1; then pass "$name"; else fail "$name (exit $?)"; fi
}

# expect_refusal NAME PATTERN COMMAND...: the command must fail, saying PATTERN (ERE).
expect_refusal() {
  local name=$1 pattern=$2
  shift 2
  if "$@" >"$work/out" 2>&1; then
    fail "$name: accepted, but should have been refused"
  elif grep -qE -- "$pattern" "$work/out"; then
    pass "$name"
  else
    fail "$name: refused, but without /$pattern/"
  fi
}

# expect_rendered NAME FILE PATTERN...: FILE must contain every PATTERN (ERE).
expect_rendered() {
  local name=$1 file=$2
  shift 2
  local missing=()
  for pattern in "$@"; do grep -qE -- "$pattern" "$file" || missing+=("$pattern"); done
  if [[ ${#missing[@]} -eq 0 ]]; then pass "$name"; else printf '%s\n' "${missing[@]}" >"$work/out"; fail "$name: missing"; fi
}

render() { "$helm" template gantry-ci "$chart" --namespace ci "$@"; }

# 1. Lint and render every variant.
variants=(default)
for values in "$chart"/ci/*-values.yaml; do variants+=("$values"); done
rendered=()
for variant in "${variants[@]}"; do
  name=$(basename "$variant" .yaml)
  args=()
  [[ $variant != default ]] && args=(-f "$variant")
  expect_ok "helm lint --strict ($name)" "$helm" lint --strict "$chart" "${args[@]}"
  if render "${args[@]}" "${MPI[@]}" >"$work/$name.yaml" 2>"$work/out"; then
    pass "helm template ($name)"
    rendered+=("$work/$name.yaml")
  else
    fail "helm template ($name)"
  fi
done

# Worker-template fields no ci/ file sets (a private registry, the data claim, affinity,
# tolerations with a time limit, the launcher's deadline), rendered so that every field
# the MPIJob template can write is validated in step 2.
scheduling=(--set 'imagePullSecrets[0].name=regcred' --set data.existingClaim=datasets
  --set workerGroups.pool.runPolicy.activeDeadlineSeconds=3600
  --set-json 'workerGroups.pool.tolerations=[{"key":"dedicated","operator":"Equal","value":"gantry","effect":"NoExecute","tolerationSeconds":60}]'
  --set-json 'workerGroups.pool.affinity={"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"pool","operator":"In","values":["gantry"]}]}]},"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"preference":{"matchFields":[{"key":"metadata.name","operator":"NotIn","values":["node-0"]}]}}]},"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":50,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchLabels":{"gantry/worker-group":"pool"}}}}]},"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"topology.kubernetes.io/zone","namespaceSelector":{"matchExpressions":[{"key":"team","operator":"Exists"}]}}]}}')
if render "${scheduling[@]}" "${MPI[@]}" >"$work/scheduling.yaml" 2>"$work/out"; then
  pass "helm template (registry secret, data claim, affinity, tolerations, deadline)"
  rendered+=("$work/scheduling.yaml")
  expect_rendered "the MPIJob carries them" "$work/scheduling.yaml" 'imagePullSecrets:' 'claimName: datasets' \
    'activeDeadlineSeconds: 3600' 'tolerationSeconds: 60' 'nodeSelectorTerms:' 'podAntiAffinity:' 'namespaceSelector:'
else
  fail "helm template (registry secret, data claim, affinity, tolerations, deadline)"
fi

# NOTES.txt is not rendered by `helm template`: render it as a ConfigMap in a copy of the
# chart (tpl gives it the same helpers and values).
cp -r "$chart" "$work/chart-notes"
cp "$chart/templates/NOTES.txt" "$work/chart-notes/notes-source.txt"
printf '%s\n' 'apiVersion: v1' 'kind: ConfigMap' 'metadata:' '  name: notes' 'data:' '  notes: |' \
  '    {{- tpl (.Files.Get "notes-source.txt") . | nindent 4 }}' >"$work/chart-notes/templates/zz-notes.yaml"
: >"$work/notes.txt"
if "$helm" template demo "$work/chart-notes" --namespace team "${MPI[@]}" -f "$chart/ci/gpu-pool-values.yaml" \
     --show-only templates/zz-notes.yaml >"$work/notes.yaml" 2>"$work/out"; then
  sed -n '/^  notes: |$/,$p' "$work/notes.yaml" | tail -n +2 | sed 's/^    //' >"$work/notes.txt"
  expect_rendered "NOTES.txt: the groups, how to reach the coordinator, submit and watch" "$work/notes.txt" \
    'demo-gantry-gpu \(serve, 2 workers x 4 ranks, 4 GPUs per worker\)' 'port-forward svc/demo-gantry-coordinator' \
    "secret demo-gantry-token -o jsonpath='\{.data.token\}'" 'gantry submit .* --watch' 'helm test demo -n team' \
    'port-forward svc/demo-gantry-coordinator 8081:8081' 'browse http://127.0.0.1:8081/'
else
  fail "NOTES.txt renders"
fi

# 2 and 3. Schemas of every rendered object; the flags of the gantry programs, in the
# templates and in the commands NOTES.txt tells users to type.
expect_ok "rendered objects match their schemas" \
  node "$here/validate/validate.mjs" --modules "$modules" --commands "$work/commands.json" "${rendered[@]}"
cat "$work/out"
# The run file of the one-shot job: its keys are gantry-worker train's flag names.
sed -n '/run.yaml: |/,/^---/p' "$work/train-job-values.yaml" | sed -nE 's/^    ([a-z][a-z0-9_-]*):.*/--\1/p' |
  tr '_' '-' | { printf 'gantry-worker train '; tr '\n' ' '; } >"$work/run-file.txt"
expect_ok "flags in the templates, the run file and NOTES.txt exist in the binaries" \
  node "$here/validate/check_flags.mjs" "$work/commands.json" --text "$work/notes.txt" --text "$work/run-file.txt" \
  "${binaries[@]}"
tail -n 1 "$work/out"

# What each variant claims to render.
expect_rendered "coordinator: gRPC health probes, token, non-root, read-only root" "$work/default.yaml" \
  'kind: StatefulSet' 'replicas: 1' 'livenessProbe:' 'readinessProbe:' '^ +grpc:$' \
  'service: "gantry.v1.Coordinator"' 'runAsNonRoot: true' 'readOnlyRootFilesystem: true' '"--token-file"' \
  'kind: PersistentVolumeClaim' 'helm.sh/hook: test' 'app.kubernetes.io/managed-by: Helm'
expect_rendered "cpu pool: 4 workers x 2 slots = 8 ranks of gantry-worker serve" "$work/cpu-pool-values.yaml" \
  'kind: MPIJob' 'slotsPerWorker: 2' 'launcherCreationPolicy: WaitForWorkersReady' '^ +replicas: 4$' \
  '^ +- "8"$' '"serve"' 'restartPolicy: OnFailure' 'claimName: datasets' '"--data-root"'
expect_rendered "gpu pool: 4 GPUs per worker, on GPU nodes" "$work/gpu-pool-values.yaml" \
  'name: gantry-ci-gpu$' 'nvidia.com/gpu: 4' 'slotsPerWorker: 4' 'effect: NoSchedule' 'gantry-worker:0.1.0-cuda'
expect_rendered "one-shot job: gantry-worker train from a run file, resumed when retried" "$work/train-job-values.yaml" \
  'gantry-worker train "\$@"' 'run.yaml: \|' 'model: "dcgan"' '--resume "\$run"' 'ttlSecondsAfterFinished: 86400'
expect_rendered "gpu pool values: the coordinator's dashboard and /metrics on a Service port, annotated for Prometheus" \
  "$work/gpu-pool-values.yaml" '"--http-listen"' '"0.0.0.0:8081"' 'containerPort: 8081' '^ +- name: http$' \
  'port: 8081' 'targetPort: http' 'prometheus.io/scrape: "true"' 'prometheus.io/port: "8081"' 'prometheus.io/path: "/metrics"'
if grep -qE 'http-listen|prometheus.io|name: http$' "$work/default.yaml"; then
  grep -nE 'http-listen|prometheus.io|name: http$' "$work/default.yaml" >"$work/out"
  fail "default values: no HTTP listener, port or scrape annotation"
else
  pass "default values: no HTTP listener, port or scrape annotation"
fi
if grep -q 'name: gantry-ci-pool$' "$work/train-job-values.yaml"; then
  echo "the disabled pool was rendered" >"$work/out"
  fail "one-shot job: the disabled pool is not rendered"
else
  pass "one-shot job: the disabled pool is not rendered"
fi

# 4. Refusals.
expect_refusal "no MPI Operator: fails naming it" 'need the Kubeflow MPI Operator \(kubeflow.org/v2beta1 MPIJob\)' render
expect_ok "no MPI Operator, no worker group: the coordinator alone" render --set workerGroups.pool.enabled=false
expect_refusal "workerGroups.pool.replicas=0" 'replicas: Must be greater than or equal to 1' \
  render "${MPI[@]}" --set workerGroups.pool.replicas=0
expect_refusal "workerDefaults.replicas=0" 'workerDefaults.replicas: Must be greater than or equal to 1' \
  render "${MPI[@]}" --set workerDefaults.replicas=0
expect_refusal "misspelled key in a group (lint --strict)" 'Additional property replics is not allowed' \
  "$helm" lint --strict "$chart" --set workerGroups.pool.replics=3
expect_refusal "misspelled top-level key" 'Additional property coordinater is not allowed' \
  render "${MPI[@]}" --set coordinater.port=1
expect_refusal "unknown mode" 'mode: workerGroups.pool.mode must be one of the following' \
  render "${MPI[@]}" --set workerGroups.pool.mode=pool
expect_refusal "a token shorter than 16 characters" 'auth.token: Does not match pattern' render "${MPI[@]}" --set auth.token=short
expect_refusal "a group key that is not a DNS label" 'Property name of "GPU" does not match' render "${MPI[@]}" --set workerGroups.GPU.replicas=1
expect_refusal "<name>-worker-N longer than a DNS label" 'is too long: .* more than the 63 of a DNS label' \
  render "${MPI[@]}" --set fullnameOverride=gantry-with-a-very-long-name-for-testing \
  --set workerGroups.pool.enabled=false --set workerGroups.twenty-characters-ok.replicas=1
expect_refusal "the HTTP port equal to the gRPC port" 'coordinator.http.port 50051 is the gRPC port' \
  render "${MPI[@]}" --set coordinator.http.enabled=true --set coordinator.http.port=50051
expect_refusal "a misspelled coordinator.http key" 'Additional property enable is not allowed' \
  render "${MPI[@]}" --set coordinator.http.enable=true
expect_refusal "the HTTP port out of range" 'port: Must be less than or equal to 65535' \
  render "${MPI[@]}" --set coordinator.http.port=70000
expect_refusal "a train group without a run file" 'train\\?" group without settings' \
  render "${MPI[@]}" --set workerGroups.pool.mode=train

# 5. The validator refuses what a strict API server or the operator would.
sed -e 's/^  slotsPerWorker: 2$/  slotPerWorker: 2/' \
    -e 's/launcherCreationPolicy: WaitForWorkersReady/launcherCreationPolicy: WaitForWorkers/' \
    -e 's/^      restartPolicy: OnFailure$/      restartPolicy: Always/' \
    -e 's/containerPort: 50051/containerPort: "grpc"/' "$work/cpu-pool-values.yaml" >"$work/broken.yaml"
node "$here/validate/validate.mjs" --modules "$modules" "$work/broken.yaml" >"$work/out" 2>&1
status=$?
missing=()
for pattern in 'must NOT have additional properties: slotPerWorker' 'launcherCreationPolicy must be equal to one of' \
               'restartPolicy Always: must be Never or OnFailure' 'containerPort must be integer'; do
  grep -q -- "$pattern" "$work/out" || missing+=("$pattern")
done
if [[ $status -eq 1 && ${#missing[@]} -eq 0 ]]; then
  pass "the validator refuses a broken MPIJob and StatefulSet"
else
  echo "exit $status; not reported: ${missing[*]}" >>"$work/out"
  fail "the validator refuses a broken MPIJob and StatefulSet"
fi

# The in-repo schema alone (no CRD) refuses a misspelled field deep in a pod template and
# values outside the enums of the operator's API and of core/v1 (the MPIJob changed only).
sed -E -e '/^kind: MPIJob$/,/^---$/ { s/^( +)tcpSocket:$/\1tcpSock:/
    s/mpiImplementation: OpenMPI/mpiImplementation: OpenMP/; s/cleanPodPolicy: Running/cleanPodPolicy: Finished/
    s/imagePullPolicy: IfNotPresent/imagePullPolicy: Sometimes/ }' "$work/cpu-pool-values.yaml" >"$work/unknown.yaml"
env -u GANTRY_MPIJOB_CRD node "$here/validate/validate.mjs" --modules "$modules" "$work/unknown.yaml" >"$work/out" 2>&1
status=$?
missing=()
for pattern in \
    'in-repo schema: /spec/mpiReplicaSpecs/Worker/template/spec/containers/0/readinessProbe must NOT have additional properties: tcpSock' \
    'in-repo schema: /spec/mpiImplementation must be equal to one of the allowed values ["OpenMPI","Intel","MPICH"]' \
    'in-repo schema: /spec/runPolicy/cleanPodPolicy must be equal to one of the allowed values ["None","Running","All"]' \
    'in-repo schema: /spec/mpiReplicaSpecs/Launcher/template/spec/containers/0/imagePullPolicy must be equal to one of'; do
  grep -qF -- "$pattern" "$work/out" || missing+=("$pattern")
done
if [[ $status -eq 1 && ${#missing[@]} -eq 0 ]] && ! grep -q 'operator CRD' "$work/out"; then
  pass "the in-repo MPIJob schema alone refuses an unknown pod-template field and values outside its enums"
else
  echo "exit $status; not reported: ${missing[*]}" >>"$work/out"
  fail "the in-repo MPIJob schema alone refuses an unknown pod-template field and values outside its enums"
fi

# With the operator's CRD: a schema that allows a field and a value the CRD does not have
# is reported as disagreeing with it.
if [[ -n $crd ]]; then
  sed -e 's/^      runLauncherAsWorker: {type: boolean}$/&\n      slotPerWorker: {type: integer}/' \
      -e 's/enum: \[OpenMPI, Intel, MPICH\]/enum: [OpenMPI, Intel, MPICH, MVAPICH]/' \
      "$here/validate/mpijob_v2beta1_schema.yaml" >"$work/drifted-schema.yaml"
  node "$here/validate/validate.mjs" --modules "$modules" --crd "$crd" --schema "$work/drifted-schema.yaml" \
    "${rendered[0]}" >"$work/out" 2>&1
  status=$?
  missing=()
  for pattern in "drifted-schema.yaml disagrees with the operator's CRD" '/spec/slotPerWorker: the CRD has no such field' \
                 '/spec/mpiImplementation: allows MVAPICH; the CRD allows only OpenMPI, Intel, MPICH'; do
    grep -qF -- "$pattern" "$work/out" || missing+=("$pattern")
  done
  if [[ $status -eq 1 && ${#missing[@]} -eq 0 ]]; then
    pass "a schema that disagrees with the operator's CRD is reported"
  else
    echo "exit $status; not reported: ${missing[*]}" >>"$work/out"
    fail "a schema that disagrees with the operator's CRD is reported"
  fi
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
