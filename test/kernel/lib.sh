# SPDX-License-Identifier: Apache-2.0
# Shared by the kernel suite: a temporary cgroup per test, removed with its
# guard on exit (also on failure), and assertions on what a process observed.
#
# The test is run by meson with SG (the sysctl-guard binary) and SG_IO
# (test/kernel/sysctl_io) in the environment.

set -u
. "$(dirname "${BASH_SOURCE[0]}")/../assert.sh"

CGROUPS=()
TMPDIR_TEST=$(mktemp -d /tmp/sg-kernel.XXXXXX)

[ "$(id -u)" = 0 ] || skip "needs root"
[ -x "${SG:-}" ] || { echo "SG is not set to the sysctl-guard binary"; exit 1; }

CG_ROOT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG_ROOT" ] || skip "no cgroup2 mount"

# new_cgroup VAR: creates a temporary cgroup and stores its path in VAR.
new_cgroup() {
	local dir
	dir=$(mktemp -d "$CG_ROOT/sg-test.XXXXXX") || skip "cannot create a cgroup under $CG_ROOT"
	CGROUPS+=("$dir")
	printf -v "$1" '%s' "$dir"
}

SLEEPERS=()

cleanup() {
	local i dir
	[ ${#SLEEPERS[@]} -gt 0 ] && kill "${SLEEPERS[@]}" 2>/dev/null
	wait 2>/dev/null
	for ((i = ${#CGROUPS[@]} - 1; i >= 0; i--)); do
		dir=${CGROUPS[$i]}
		"$SG" detach --cgroup "$dir" >/dev/null 2>&1
		# Children first: nested cgroups made by tests.
		find "$dir" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
		rmdir "$dir" 2>/dev/null
	done
	rm -rf "$TMPDIR_TEST"
}
trap cleanup EXIT

# policy NAME JSON: writes a policy file and prints its path.
policy() {
	local file="$TMPDIR_TEST/$1.json"
	printf '%s\n' "$2" >"$file"
	echo "$file"
}

attach() {
	local cg=$1 file=$2 out
	if ! out=$("$SG" attach --cgroup "$cg" --policy "$file" 2>&1); then
		echo "FAIL: attach $file to $cg: $out"
		FAIL=$((FAIL + 1))
		return 1
	fi
}

# io CGROUP [--uts|--net] OP...: sysctl_io inside the cgroup.
io() {
	local cg=$1
	shift
	"$SG_IO" --cgroup "$cg" "$@"
}

# container ID ANNOTATIONS_JSON [CGROUPS_PATH] [SYSCTL_JSON]: what a runtime
# gives the hook: a cgroup with a process in it and a bundle whose
# config.json carries the annotations. Sets CG, PID, BUNDLE.
container() {
	local id=$1 annotations=$2 sysctls=${4:-'{}'}
	new_cgroup CG
	sleep 300 &
	PID=$!
	SLEEPERS+=("$PID")
	echo "$PID" >"$CG/cgroup.procs"
	BUNDLE=$TMPDIR_TEST/$id
	mkdir -p "$BUNDLE"
	printf '{"ociVersion": "1.0.2", "annotations": %s, "linux": {"cgroupsPath": "%s", "sysctl": %s}}\n' \
		"$annotations" "${3:-${CG#$CG_ROOT}}" "$sysctls" >"$BUNDLE/config.json"
}

# state ID STATUS PID: the hook's state for the last container's bundle.
state() { printf '{"ociVersion": "1.0.2", "id": "%s", "status": "%s", "pid": %s, "bundle": "%s"}' "$1" "$2" "$3" "$BUNDLE"; }
