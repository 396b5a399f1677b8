#!/usr/bin/env bash
# Starts one container of a played pod: the kubelet's part. Runs as root inside the pod's
# network namespace and new UTS and mount namespaces (pods_test.sh starts it with
# `ip netns exec NS unshare --uts --mount --propagation private`), then becomes the
# container's process.
#
#   pod_start.sh POD_DIR WORK_DIR
#
# POD_DIR holds what plan_pods.mjs wrote: pod.sh, mounts, hosts, argv, env. It sets the pod's
# hostname; mounts its volumes (each line of `mounts`: SOURCE TARGET ro|rw), its
# /etc/hosts, the cluster's resolv.conf and the images' passwd and group; makes the root
# filesystem read-only when the container asks for it (readOnlyRootFilesystem); and
# execs the command as the pod's user and groups, without capabilities and with
# no_new_privs (runAsUser, runAsGroup, fsGroup; capabilities drop ALL;
# allowPrivilegeEscalation false), with only the container's environment.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 POD_DIR WORK_DIR" >&2
  exit 2
fi
pod_dir=$1
work=$2
# shellcheck source=/dev/null
source "$pod_dir/pod.sh"

hostname "$POD_HOSTNAME"
while IFS=$'\t' read -r source target mode; do
  mount --bind "$source" "$target"
  if [[ $mode == ro ]]; then mount -o remount,bind,ro "$target"; fi
done <"$pod_dir/mounts"
mount --bind "$pod_dir/hosts" /etc/hosts
mount --bind "$work/resolv.conf" /etc/resolv.conf
mount --bind "$work/passwd" /etc/passwd
mount --bind "$work/group" /etc/group
if [[ $READ_ONLY_ROOT == 1 ]]; then
  mount -o remount,bind,ro /
fi

mapfile -d '' argv <"$pod_dir/argv"
mapfile -d '' env <"$pod_dir/env"
cd "$WORKDIR"
exec setpriv --reuid "$RUN_AS_UID" --regid "$RUN_AS_GID" --groups "$FS_GROUP" --no-new-privs \
  --inh-caps=-all --bounding-set=-all -- env -i "${env[@]}" "${argv[@]}"
