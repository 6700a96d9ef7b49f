#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# runc containers and the namespaces they share with the host
# (docs/namespaces.md). The test runs in network, UTS and IPC namespaces of
# its own, which play the host's: runc started here without namespaces of
# those types writes into them, never into the real host's.
[ -n "${SG_NS_HOST:-}" ] || exec env SG_NS_HOST=1 unshare -n -u -i "$0" "$@"
. "$(dirname "$0")/lib.sh"

# One rule per namespace type, and one that lets writes reach the host's.
POLICY=$(json_annotation io.sysctl-guard.policy '{"version": 1, "default": "read", "rules": [
  {"name": "net.core.somaxconn", "access": "read-write"},
  {"name": "kernel.domainname", "access": "read-write"},
  {"name": "kernel.shm_rmid_forced", "access": "read-write"},
  {"name": "kernel.hostname", "access": "read-write", "allow_host_namespace": true}]}')
# What the workload's writes got, one word each.
WRITES='for w in net/core/somaxconn:1000 kernel/domainname:sg-ns kernel/shm_rmid_forced:1 kernel/hostname:sg-ns; do
  (echo ${w#*:} > /proc/sys/${w%%:*}) 2>/dev/null && echo -n "ok " || echo -n "EPERM "; done'

# namespaced_container ID NAMESPACES_JSON: a bundle whose linux.namespaces
# is NAMESPACES_JSON (besides pid and mount), run; prints what it observed.
namespaced_container() {
	make_bundle "$WORK/$1" "$WORK/rootfs" "$SG" createRuntime "$POLICY" "$(json_args "$WRITES")"
	python3 - "$WORK/$1/config.json" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["linux"]["namespaces"] = [{"type": "pid"}, {"type": "mount"}] + json.loads(sys.argv[2])
if not any(n["type"] == "uts" for n in c["linux"]["namespaces"]):
    c.pop("hostname", None)  # runc sets one only in a UTS namespace of the container's
json.dump(c, open(sys.argv[1], "w"))
PY
	CONTAINERS+=("$1")
	runc run --bundle "$WORK/$1" "$1" </dev/null 2>&1
}
# host_values: this test's (the host's) values of the four sysctls.
host_values() {
	local n
	for n in net/core/somaxconn kernel/domainname kernel/shm_rmid_forced kernel/hostname; do
		echo -n "$(cat "/proc/sys/$n") "
	done
}

BEFORE=$(host_values)
expect "no network, UTS or IPC namespace of its own: writes there are denied, but where a rule opts in" \
	"EPERM EPERM EPERM ok " namespaced_container sg-ns-shared '[]'
expect "... and the host's values are as they were, but the opted-in one" \
	"$(echo "$BEFORE" | awk '{print $1, $2, $3}') sg-ns " host_values

expect "its own network, UTS and IPC namespaces: its writes are its own" "ok ok ok ok " \
	namespaced_container sg-ns-own '[{"type": "network"}, {"type": "uts"}, {"type": "ipc"}]'

# A pod's containers join its sandbox's namespaces by path: not the host's.
unshare -n -u -i sleep 300 &
SANDBOX=$!
trap 'kill $SANDBOX 2>/dev/null; cleanup' EXIT
for _ in $(seq 400); do [ "$(cat /proc/$SANDBOX/comm)" = sleep ] && break; sleep 0.005; done
expect "joined to a sandbox's namespaces by path: allowed" "ok ok ok ok " namespaced_container sg-ns-joined \
	"[{\"type\": \"network\", \"path\": \"/proc/$SANDBOX/ns/net\"}, {\"type\": \"uts\", \"path\": \"/proc/$SANDBOX/ns/uts\"}, {\"type\": \"ipc\", \"path\": \"/proc/$SANDBOX/ns/ipc\"}]"
expect "... and the sandbox sees the values written" "1000 sg-ns" \
	nsenter -t "$SANDBOX" -n -u sh -c 'echo $(cat /proc/sys/net/core/somaxconn) $(cat /proc/sys/kernel/domainname)'
# A path may name the host's namespace too: the hook compares namespaces, not text.
expect "a path naming the host's network namespace: denied there" "EPERM ok ok ok " \
	namespaced_container sg-ns-hostpath "[{\"type\": \"network\", \"path\": \"/proc/$$/ns/net\"}, {\"type\": \"uts\"}, {\"type\": \"ipc\"}]"
all_pins() { echo "$(pins_for sg-ns-shared) $(pins_for sg-ns-own) $(pins_for sg-ns-joined) $(pins_for sg-ns-hostpath)"; }
expect "poststop removed every guard" "0 0 0 0" all_pins
finish
