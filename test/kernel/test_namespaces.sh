#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Namespace-aware guarding (docs/namespaces.md). The test runs in network,
# UTS and IPC namespaces of its own, which play the host's: a container
# without its own writes there, never in the real host's.
#
# 1. The table of namespaced sysctls against the kernel: for a sample of it,
#    a value written in a new namespace of the type the table names is seen
#    there and not in the one the writer came from.
# 2. A container sharing a namespace with the host has its writes there
#    denied (unless a rule sets allow_host_namespace); with its own, or
#    joined to a sibling's, they are allowed; events, status and learn say so.
[ -n "${SG_NS_HOST:-}" ] || exec env SG_NS_HOST=1 unshare -n -u -i "$0" "$@"
. "$(dirname "$0")/lib.sh"

P=$(policy ns '{"version": 1, "default": "read", "rules": [
  {"name": "kernel.domainname", "access": "read-write"},
  {"name": "net.core.somaxconn", "access": "read-write"},
  {"name": "kernel.shm_rmid_forced", "access": "read-write"},
  {"name": "kernel.hostname", "access": "read-write", "allow_host_namespace": true}]}')

# namespace_of NAME: the namespace explain says keeps NAME (slash form).
namespace_of() { "$SG" explain "$P" "$1" | sed -n 's/^  namespace: \([a-z]*\).*/\1/p'; }

# sample NAME NS VALUE UNSHARE_FLAGS...: the table says NS, and a write of
# VALUE in a new namespace (UNSHARE_FLAGS) is read back there, not here.
# The value is read back with bash's own `read`, which forks nothing
# (kernel.ns_last_pid moves with every fork), and reads whole values, as
# the kernel's integer sysctls need.
sample() {
	local name=$1 ns=$2 value=$3 before inside after
	shift 3
	if [ ! -e "/proc/sys/$name" ]; then
		echo "ok: $name is not on this kernel"
		return
	fi
	expect "the table puts $name in the $ns namespace" "$ns" namespace_of "$name"
	# A chroot may make no user namespace (the kernel matrix's guests run in one).
	if ! unshare "$@" true 2>/dev/null; then
		echo "note: no new $ns namespace can be made here: $name not checked against the kernel"
		return
	fi
	read -r before <"/proc/sys/$name"
	inside=$(unshare "$@" bash -c "echo $value >/proc/sys/$name && read -r v </proc/sys/$name && echo \$v")
	read -r after <"/proc/sys/$name"
	# Here, kernel.ns_last_pid moved with the forks in between, never to VALUE.
	[ "$name" = kernel/ns_last_pid ] && [ "$after" != "$value" ] && after=$before
	expect "$name: a write in a new $ns namespace is seen there, not here" \
		"$value $before" echo "$inside $after"
}
sample kernel/domainname uts sg-ns-test -u
sample kernel/hostname uts sg-ns-test -u
sample net/core/somaxconn net 1234 -n
sample net/ipv4/ip_unprivileged_port_start net 2000 -n
sample kernel/shm_rmid_forced ipc 1 -i
sample kernel/msgmax ipc 4096 -i
sample fs/mqueue/queues_max ipc 100 -i
sample user/max_user_namespaces user 100 -U -r
sample kernel/ns_last_pid pid 5000 -p -f
sample vm/memfd_noexec pid 1 -p -f
expect "a sysctl the kernel keeps once is in none" "none" namespace_of vm/swappiness

# writes CGROUP [NSENTER_TARGET [NSENTER_FLAGS]]: what writes of
# kernel.domainname, net.core.somaxconn, kernel.shm_rmid_forced and
# kernel.hostname got from a process in CGROUP, in TARGET's network, UTS and
# IPC namespaces (or those FLAGS name), else in this test's: the host's.
writes() {
	local enter=()
	# shellcheck disable=SC2206 # FLAGS are words
	[ -n "${2:-}" ] && enter=(nsenter -t "$2" ${3:--n -u -i})
	"${enter[@]}" "$SG_IO" --cgroup "$1" write kernel/domainname sg-x write net/core/somaxconn 1000 \
		write kernel/shm_rmid_forced 1 write kernel/hostname sg-y | tr '\n' ' '
}
ANN="{\"io.sysctl-guard.policy\": $(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()))' "$P")}"

# A container without its own network, UTS and IPC namespaces.
"$SG" monitor --json >"$TMPDIR_TEST/events.json" 2>"$TMPDIR_TEST/monitor.err" &
MONITOR=$!
SLEEPERS+=("$MONITOR")
for _ in $(seq 200); do grep -q monitoring "$TMPDIR_TEST/monitor.err" && break; sleep 0.05; done
CONTAINER_NS=env container ns-shared "$ANN"
hook_created ns-shared >/dev/null || echo "FAIL: the hook refused ns-shared"
expect "sharing the host's namespaces: writes there are denied, but where a rule opts in" \
	"EPERM EPERM EPERM ok " writes "$CG"
expect "reads are not" "ok $(cat /proc/sys/kernel/domainname)" "$SG_IO" --cgroup "$CG" read kernel/domainname
sleep 0.5 # the monitor polls its ring buffer every 200 ms
kill -TERM "$MONITOR"
wait "$MONITOR" 2>/dev/null
expect "the events give the reason and the namespace" \
	"kernel.domainname uts
net.core.somaxconn net
kernel.shm_rmid_forced ipc" python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["verdict"] == "deny" and "shared with the host" in e["reason"]:
        print(e["sysctl"], e["host_namespace"])' "$TMPDIR_TEST/events.json"
expect_match "status names the shared namespaces and counts the host-level writes (of every guard of the policy)" \
	"namespaces shared with the host: net,uts,ipc,user,pid.*\(write to a host namespace\) +0 +[1-9]" \
	"$SG" status --cgroup "$CG"
expect "status --json lists them" "['net', 'uts', 'ipc', 'user', 'pid']" sh -c "\"$SG\" status --cgroup \"$CG\" --json |
	python3 -S -c 'import json,sys; print(json.load(sys.stdin)[0][\"host_namespaces\"])'"

# Its own namespaces, as runc makes them.
container ns-own "$ANN"
hook_created ns-own >/dev/null || echo "FAIL: the hook refused ns-own"
expect "its own namespaces: writes there are its own" "ok ok ok ok " writes "$CG" "$PID"
expect_match "status says which are shared" "namespaces shared with the host: user,pid \(" \
	"$SG" status --cgroup "$CG"

# Joined to a sibling's namespaces (a pod sandbox's), not the host's.
unshare -n -u -i sleep 300 &
SIBLING=$!
SLEEPERS+=("$SIBLING")
in_its_namespaces "$SIBLING"
CONTAINER_NS="nsenter -t $SIBLING -n -u -i" container ns-joined "$ANN"
hook_created ns-joined >/dev/null || echo "FAIL: the hook refused ns-joined"
expect "joined to a sibling's namespaces: allowed" "ok ok ok ok " writes "$CG" "$SIBLING"

# No process to look at: config.json's linux.namespaces, paths compared.
config_namespaces() { # config_namespaces ID NET_PATH: a dead pid, namespaces from the config
	new_cgroup CG
	BUNDLE=$TMPDIR_TEST/$1
	mkdir -p "$BUNDLE"
	printf '{"annotations": %s, "linux": {"cgroupsPath": "%s", "namespaces": [{"type": "network", "path": "%s"}, {"type": "uts"}, {"type": "ipc"}]}}\n' \
		"$ANN" "${CG#$CG_ROOT}" "$2" >"$BUNDLE/config.json"
	PID=999999
	hook_created "$1" >/dev/null || echo "FAIL: the hook refused $1"
}
config_namespaces ns-path-sibling "/proc/$SIBLING/ns/net"
expect "a namespace path naming a sibling's: allowed" "ok ok ok ok " writes "$CG" "$SIBLING"
config_namespaces ns-path-host "/proc/$$/ns/net"
expect "a namespace path naming the host's: denied there only" "ok EPERM ok ok " \
	writes "$CG" "$SIBLING" "-u -i"

# attach: --pid checks; without it, nothing is (status says so).
new_cgroup CG
sleep 300 &
SLEEPERS+=("$!")
in_its_namespaces "$!"
attach_out=$("$SG" attach --cgroup "$CG" --policy "$P" --pid "$!" 2>&1) || echo "FAIL: attach --pid: $attach_out"
expect "attach --pid: a process in the host's namespaces" "EPERM EPERM EPERM ok " writes "$CG"
attach "$CG" "$P"
expect "attach without --pid checks no namespace" "ok ok ok ok " writes "$CG"
expect_match "and status says so" "namespaces: not checked" "$SG" status --cgroup "$CG"
expect "attach --pid of no process is a usage error" "1" sh -c "\"$SG\" attach --cgroup \"$CG\" --policy \"$P\" --pid 0 >/dev/null 2>&1; echo \$?"

# learn: an audit guard sharing the host's network namespace records the
# write as the host's; the learned rule allows it, and learn says so.
CONTAINER_NS=env container ns-learn '{"io.sysctl-guard.profile": "audit", "io.sysctl-guard.learn": "true"}'
hook_created ns-learn >/dev/null || echo "FAIL: the hook refused ns-learn"
expect "an audit guard lets the host-level write through" "ok" "$SG_IO" --cgroup "$CG" write net/core/somaxconn 1001
"$SG" learn --cgroup "$CG" >"$TMPDIR_TEST/learned.json" 2>"$TMPDIR_TEST/learned.err"
expect "the learned rule allows it in the host's namespace" "read-write True" python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["rules"]:
    if r["name"] == "net.core.somaxconn":
        print(r["access"], r.get("allow_host_namespace"))' "$TMPDIR_TEST/learned.json"
expect_match "and learn warns" "net.core.somaxconn \(the host's net namespace\)" cat "$TMPDIR_TEST/learned.err"
expect "check accepts the learned policy" "0" sh -c "\"$SG\" check \"$TMPDIR_TEST/learned.json\" >/dev/null 2>&1; echo \$?"
finish
