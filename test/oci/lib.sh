# SPDX-License-Identifier: Apache-2.0
# Shared by the oci suite: a busybox rootfs, bundles that run our hook,
# cleanup of every container and guard the test made, assertions.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../assert.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../node.sh"
. "$(dirname "$0")/bundle.sh"

CONTAINERS=()

[ "$(id -u)" = 0 ] || skip "needs root"
[ -x "${SG:-}" ] || { echo "SG is not set to the sysctl-guard binary"; exit 1; }
command -v runc >/dev/null || skip "runc is not installed"
# Made once nothing above can exit: cleanup (below) removes it.
WORK=$(mktemp -d /tmp/sg-oci.XXXXXX)

cleanup() {
	for c in "${CONTAINERS[@]}"; do
		runc delete --force "$c" >/dev/null 2>&1
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
# A test meson times out gets SIGTERM, on which bash would exit without the
# EXIT trap: exit through it instead, leaving no cgroup, pin or container.
trap 'exit 143' TERM
trap 'exit 130' INT

# A private node config: no baseline unless a test writes one.
export SYSCTL_GUARD_CONFIG=$WORK/config.json
echo '{ "version": 1, "profiles_dir": "'"$WORK"'/profiles" }' >"$SYSCTL_GUARD_CONFIG"
mkdir -p "$WORK/profiles"

make_rootfs "$WORK/rootfs" || skip "cannot build a busybox rootfs"

# json_args CMD: the process args ["sh", "-c", CMD] as JSON.
json_args() {
	python3 -c 'import json,sys; print(json.dumps(["sh", "-c", sys.argv[1]]))' "$1"
}

# json_annotation KEY VALUE
json_annotation() {
	python3 -c 'import json,sys; print(json.dumps({sys.argv[1]: sys.argv[2]}))' "$1" "$2"
}

# run_container ID STAGE ANNOTATIONS CMD [SYSCTLS]: runc run, prints what the workload printed.
run_container() {
	local id=$1 stage=$2 annotations=$3 cmd=$4 sysctls=${5:-"{}"}
	make_bundle "$WORK/$id" "$WORK/rootfs" "$SG" "$stage" "$annotations" "$(json_args "$cmd")" "$sysctls"
	CONTAINERS+=("$id")
	runc run --bundle "$WORK/$id" "$id" </dev/null 2>&1
}

# Pins left for a container id (by the meta map).
pins_for() {
	"$SG" status --json 2>/dev/null | python3 -c 'import json,sys; print(sum(1 for g in json.load(sys.stdin) if g["container_id"] == sys.argv[1]))' "$1"
}

# An inline policy of 300 patterns (a large DFA) that lets the workload read
# kernel.domainname, not write it.
MANY_PATTERNS=$(python3 -c 'import json
rules = [{"name": "net.ipv6.conf.sgo%d*.mtu" % i, "access": "none"} for i in range(300)]
rules.append({"name": "kernel.domainnam?", "access": "read"})
print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "default": "read", "rules": rules})}))')

# The workload most tests run: a read, a write, and what each observed.
PROBE_CMD='cat /proc/sys/kernel/ostype; (echo x > /proc/sys/kernel/domainname) 2>&1 && echo write-ok || echo write-denied'

# Podman (cgroupfs) makes libpod_parent in the cgroup2 hierarchy, and its
# overlay driver mounts its storage (under WORK) on itself. note_podman_parent
# records whether libpod_parent was there before the test; remove_podman_leftovers
# unmounts the storage and removes libpod_parent unless it was.
note_podman_parent() {
	LIBPOD_PARENT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)/libpod_parent
	[ -d "$LIBPOD_PARENT" ] && LIBPOD_BEFORE=1 || LIBPOD_BEFORE=0
}
remove_podman_leftovers() {
	local m
	findmnt -rn -o TARGET | grep "^$WORK/" | sort -r | while read -r m; do umount -l "$m"; done
	[ "$LIBPOD_BEFORE" = 0 ] && [ -d "$LIBPOD_PARENT" ] &&
		find "$LIBPOD_PARENT" -depth -type d -exec rmdir {} \; 2>/dev/null
}
