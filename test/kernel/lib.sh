# SPDX-License-Identifier: Apache-2.0
# Shared by the kernel suite: a temporary cgroup per test, removed with its
# guard on exit (also on failure), and assertions on what a process observed.
#
# The test is run by meson with SG (the sysctl-guard binary) and SG_IO
# (test/kernel/sysctl_io) in the environment.

set -u
. "$(dirname "${BASH_SOURCE[0]}")/../assert.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../node.sh"

CGROUPS=()

[ "$(id -u)" = 0 ] || skip "needs root"
[ -x "${SG:-}" ] || { echo "SG is not set to the sysctl-guard binary"; exit 1; }

CG_ROOT=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG_ROOT" ] || skip "no cgroup2 mount"
# Made once nothing above can exit: cleanup (below) removes it.
TMPDIR_TEST=$(mktemp -d /tmp/sg-kernel.XXXXXX)

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
# A test meson times out gets SIGTERM, on which bash would exit without the
# EXIT trap: exit through it instead, leaving no cgroup, pin or container.
trap 'exit 143' TERM
trap 'exit 130' INT

# rewrites_ignored: this kernel ignores bpf_sysctl_set_new_value(), as the
# hook's probe found (it has run once an attach or a hook has).
rewrites_ignored() { grep -q 'rewrite=0' /run/sysctl-guard/probe 2>/dev/null; }

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

# in_its_namespaces PID: waits until PID, started as `unshare|nsenter|env ...
# sleep`, runs sleep: it is in its namespaces then, as a container's process
# is by the time its runtime runs the hook.
in_its_namespaces() {
	for _ in $(seq 400); do
		[ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ] && return
		sleep 0.005
	done
	echo "FAIL: process $1 did not start sleep"
	FAIL=$((FAIL + 1))
}

# container ID ANNOTATIONS_JSON [CGROUPS_PATH] [SYSCTL_JSON]: what a runtime
# gives the hook: a cgroup with a process in it and a bundle whose
# config.json carries the annotations. Sets CG, PID, BUNDLE. The process has
# network, UTS and IPC namespaces of its own, as a container has (the hook
# denies writes to the sysctls of those it shares with the host), or those
# CONTAINER_NS asks for, as unshare(1) or nsenter(1) arguments.
container() {
	local id=$1 annotations=$2 sysctls=${4:-'{}'}
	new_cgroup CG
	# shellcheck disable=SC2086 # the words of CONTAINER_NS are the command's
	${CONTAINER_NS:-unshare -n -u -i} sleep 300 &
	PID=$!
	SLEEPERS+=("$PID")
	in_its_namespaces "$PID"
	echo "$PID" >"$CG/cgroup.procs"
	BUNDLE=$TMPDIR_TEST/$id
	mkdir -p "$BUNDLE"
	printf '{"ociVersion": "1.0.2", "annotations": %s, "linux": {"cgroupsPath": "%s", "sysctl": %s}}\n' \
		"$annotations" "${3:-${CG#$CG_ROOT}}" "$sysctls" >"$BUNDLE/config.json"
}

# state ID STATUS PID: the hook's state for the last container's bundle.
state() { printf '{"ociVersion": "1.0.2", "id": "%s", "status": "%s", "pid": %s, "bundle": "%s"}' "$1" "$2" "$3" "$BUNDLE"; }

# A node of its own for tests of profiles: PROFILES and SYSCTL_GUARD_CONFIG
# under TMPDIR_TEST. node_config [BASELINE_PROFILE] writes its config, with
# debug lines on stderr: a hook says there whether it found its policy by
# its inputs.
use_own_node() {
	PROFILES=$TMPDIR_TEST/profiles
	mkdir -p "$PROFILES"
	export SYSCTL_GUARD_CONFIG=$TMPDIR_TEST/config.json
	node_config
}
node_config() {
	local baseline=${1:+", \"baseline\": \"$1\""}
	echo "{ \"version\": 1, \"profiles_dir\": \"$PROFILES\", \"log\": {\"level\": \"debug\", \"syslog\": false}$baseline }" >"$SYSCTL_GUARD_CONFIG"
}

# guarded ID: the hook at createRuntime for the container made last (made
# out here: its sleeping process would hold a command substitution open);
# prints whether its policy was found by its inputs ("reused" or "made"),
# then what writes of kernel.domainname (x) and kernel.hostname (y) got.
guarded() {
	hook_created "$1" || return
	echo "$(io "$CG" --uts write kernel/domainname x) $(io "$CG" --uts write kernel/hostname y)"
}

# hook_created ID [VAR=VALUE...]: the hook at createRuntime for the container
# made last, with those variables set; prints "reused " or "made " (whether
# it found its policy by its inputs), or why it failed (then returns 1).
hook_created() {
	state "$1" created "$PID" | env "${@:2}" "$SG" hook createRuntime 2>"$TMPDIR_TEST/$1.err" ||
		{ echo "hook failed: $(cat "$TMPDIR_TEST/$1.err")"; return 1; }
	grep -q "found by its inputs" "$TMPDIR_TEST/$1.err" && echo -n "reused " || echo -n "made "
}

# policy_of ID: the policy key of container ID's guard; policy_of_cgroup DIR: of DIR's.
# usage_status COMMAND...: COMMAND's exit status, its output dropped.
usage_status() { "$@" </dev/null >/dev/null 2>&1; echo $?; }

first_policy_hash() { python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["policy_hash"])'; }
policy_of() { "$SG" status --container "$1" --json | first_policy_hash; }
policy_of_cgroup() { "$SG" status --cgroup "$1" --json 2>/dev/null | first_policy_hash; }
# program_of_cgroup DIR: the key of the node program DIR's guard uses.
program_of_cgroup() {
	"$SG" status --cgroup "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["program"])'
}
# slots PROGRAM: the slots map of node program PROGRAM, a line "SLOT HOLDER" each.
slots() {
	bpftool -j map dump pinned "/sys/fs/bpf/sysctl-guard/programs/$1/slots" | python3 -c 'import json, sys
for e in json.load(sys.stdin):
    print(int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little"),
          bytes(int(b, 16) for b in e["value"]).rstrip(b"\0").decode())'
}

# Entries of the node programs' outer maps at slots no policy holds: 0 at
# every moment (a slot is claimed before it is placed, emptied before it is
# freed). The maps are read one after the other, not at one moment: the pins
# lock, held as gc holds it, keeps other suites' hooks from claiming or
# releasing a slot between the reads (a policy claimed and placed after the
# slots were read looked like a stray).
outer_at_free_slots() {
	flock -x /sys/fs/bpf/sysctl-guard python3 - <<'EOF'
import json, os, subprocess
root = "/sys/fs/bpf/sysctl-guard/programs"
def keys(pin):
	out = subprocess.run(["bpftool", "-j", "map", "dump", "pinned", pin], capture_output=True, text=True).stdout
	entries = json.loads(out or "[]")
	# A pin that is not there (an error object): a program another suite is
	# making or removing; without its slots, every entry of its outer maps counts.
	return {tuple(e["key"]) for e in entries} if isinstance(entries, list) else set()
def outer(pin):
	out = subprocess.run(["bpftool", "-j", "map", "show", "pinned", pin], capture_output=True, text=True).stdout
	return json.loads(out or "{}").get("type") == "array_of_maps"
stray = 0
for prog in os.listdir(root):
	slots = keys(f"{root}/{prog}/slots")
	for table in os.listdir(f"{root}/{prog}"):
		if outer(f"{root}/{prog}/{table}"):
			stray += len(keys(f"{root}/{prog}/{table}") - slots)
print(stray)
EOF
}
