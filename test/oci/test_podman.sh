#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Podman with our hooks.d file and --annotation; --privileged for a writable
# /proc/sys; Podman's default net.ipv4.ping_group_range must not break start.
# It runs in a network, UTS and IPC namespace of its own, which plays the
# host's: `--network host` here is that one, never the real host's.
[ -n "${SG_NS_HOST:-}" ] || exec env SG_NS_HOST=1 unshare -n -u -i "$0" "$@"
. "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || skip "podman is not installed"

# Containers guarded before this test are not this test's to account for.
GUARDS_BEFORE=$("$SG" status --json 2>/dev/null | python3 -c 'import json,sys; print(" ".join(g["container_id"] for g in json.load(sys.stdin)))')
HOOKS=$WORK/hooks.d
mkdir -p "$HOOKS"
python3 - "$(dirname "$0")/../../examples/hooks.d/sysctl-guard-annotated.json" "$SG" >"$HOOKS/sysctl-guard.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
h["hook"]["path"] = sys.argv[2]
h["hook"]["env"] = [k + "=" + __import__("os").environ[k] for k in ("SYSCTL_GUARD_CONFIG", "SYSCTL_GUARD_CONFINE") if __import__("os").environ.get(k)]
print(json.dumps(h))
PY

note_podman_parent
trap 'remove_podman_leftovers; cleanup' EXIT

PODMAN=(podman --runtime runc --cgroup-manager cgroupfs --hooks-dir "$HOOKS" --root "$WORK/storage" --runroot "$WORK/run")
RUN=(run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --privileged)
# podman_run [OPTION...] -- CMD...: the rootfs path must come right before the command.
podman_run() {
	local opts=()
	while [ "$1" != "--" ]; do opts+=("$1"); shift; done
	shift
	"${PODMAN[@]}" "${RUN[@]}" "${opts[@]}" --rootfs "$WORK/rootfs" "$@" </dev/null 2>&1
}

expect "podman: a profile annotation guards the container" "Linux
sh: write error: Operation not permitted
write-denied" podman_run --annotation io.sysctl-guard.profile=read-only -- sh -c "$PROBE_CMD"

POLICY='{"version":1,"rules":[{"name":"net.core.somaxconn","access":"read-write","range":[128,4096],"on_violation":"clamp"}]}'
# csv KEY=VALUE: the form Podman's --annotation parses (CSV: quote, double the quotes).
csv() { python3 -c 'import sys; print("\"" + sys.argv[1].replace("\"", "\"\"") + "\"")' "$1"; }
CSV=$(csv "io.sysctl-guard.policy=$POLICY")
expect "podman: an inline policy, CSV-quoted, clamps a write" "4096" \
	podman_run --annotation "$CSV" -- sh -c 'echo 65535 > /proc/sys/net/core/somaxconn; cat /proc/sys/net/core/somaxconn'

# Podman adds its default linux.sysctl (net.ipv4.ping_group_range=0 0) to every
# container: a profile preloaded with that pair is found by its first
# container's inputs (the hook records no inputs of its own), and enforced.
PROFILE=sg-podman-pre-$$
printf '{"version": 1, "default": "read-write", "rules": [{"name": "kernel.domainname", "access": "read"}, {"name": "kernel.sg_podman_%s", "access": "none"}]}\n' \
	"$$" >"$WORK/profiles/$PROFILE.json"
DEFAULTS=$(sed -n '/^default_sysctls/,/]/s/^ *"\(.*\)",*$/\1/p' /usr/share/containers/containers.conf /etc/containers/containers.conf 2>/dev/null | tail -1)
if [ "$DEFAULTS" = "net.ipv4.ping_group_range=0 0" ]; then
	KEY=$("$SG" preload --sysctl "$DEFAULTS" "$PROFILE" | sed -n 's/.*: policy \([0-9a-f]*\) .*/\1/p')
	expect "podman: preload --sysctl with Podman's default pair records its inputs" "1" inputs_naming "$KEY"
	expect "podman: the preloaded profile guards its first container" "Linux
sh: write error: Operation not permitted
write-denied" podman_run --annotation io.sysctl-guard.profile="$PROFILE" -- sh -c "$PROBE_CMD"
	# While one runs, its guard names the preloaded policy.
	running_policy() {
		local id
		id=$("${PODMAN[@]}" run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
			--privileged --annotation io.sysctl-guard.profile="$PROFILE" --rootfs "$WORK/rootfs" \
			sleep 30 </dev/null 2>&1) || { echo "podman run -d: $id"; return; }
		echo "$("$SG" status --container "$id" --json 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["policy_hash"])' 2>&1) $(inputs_naming "$KEY")"
		"${PODMAN[@]}" rm -f -t 0 "$id" >/dev/null 2>&1
	}
	expect "... a running one's guard has the preloaded policy, and no inputs were recorded" "$KEY 1" running_policy
	rm -f /sys/fs/bpf/sysctl-guard/policies/"$KEY"/preloaded:*
else
	echo "note: Podman's default_sysctls here are not net.ipv4.ping_group_range=0 0 alone: preload --sysctl not tried"
fi

# --network host shares the host's network namespace: a write there is the
# host's, denied though the policy allows the sysctl; in its own, allowed.
NS_POLICY=$(csv 'io.sysctl-guard.policy={"version":1,"rules":[{"name":"net.core.somaxconn","access":"read-write"}]}')
SOMAXCONN=$(cat /proc/sys/net/core/somaxconn)
NS_WRITE='(echo 1000 > /proc/sys/net/core/somaxconn) 2>/dev/null && echo write-ok || echo write-denied'
RUN=(run --rm --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --privileged)
expect "podman --network host: a write to the host's network namespace is denied" "write-denied" \
	podman_run --network host --annotation "$NS_POLICY" -- sh -c "$NS_WRITE"
expect "... and the host's value is as it was" "$SOMAXCONN" cat /proc/sys/net/core/somaxconn
expect "podman --network none (its own): allowed" "write-ok" \
	podman_run --network none --annotation "$NS_POLICY" -- sh -c "$NS_WRITE"
RUN=(run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --privileged)

expect "podman: no annotation, the hook does not run" "Linux
write-ok" podman_run -- sh -c "$PROBE_CMD"

expect_match "podman: a bad annotation stops the container with our message" \
	"sysctl-guard.*policy version 1; got 2" podman_run --annotation "$(csv 'io.sysctl-guard.policy={"version": 2}')" -- true
expect "podman: no pins left" "0" sh -c "\"$SG\" status --json 2>/dev/null | python3 -c 'import json,sys; print(len([g for g in json.load(sys.stdin) if g[\"container_id\"] and g[\"container_id\"] not in sys.argv[1].split()]))' \"$GUARDS_BEFORE\""
finish
