#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# crun refuses hybrid cgroups: it runs in a mount namespace with cgroup2 on
# /sys/fs/cgroup, and without linux.resources (its device eBPF path would
# raise RLIMIT_MEMLOCK, which these machines forbid).
. "$(dirname "$0")/lib.sh"
command -v crun >/dev/null || skip "crun is not installed"

# run_crun ID ANNOTATIONS CMD
run_crun() {
	local id=$1 annotations=$2 cmd=$3
	make_bundle "$WORK/$id" "$WORK/rootfs" "$SG" createRuntime "$annotations" "$(json_args "$cmd")"
	python3 - "$WORK/$id/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["linux"].pop("resources", None)
json.dump(c, open(sys.argv[1], "w"))
PY
	# bpffs stays the host's: the guard's pins must outlive this namespace.
	unshare -m sh -c "mount --make-rprivate / && umount -l /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup &&
		crun run --bundle '$WORK/$id' '$id'; rc=\$?; crun delete -f '$id' >/dev/null 2>&1; exit \$rc" </dev/null 2>&1
}

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
RO=$(json_annotation io.sysctl-guard.profile read-only)
expect "crun: a guarded container reads and is denied a write" "Linux
sh: write error: Operation not permitted
write-denied" run_crun sg-crun-ro "$RO" "$PROBE_CMD"
expect "crun: poststop removed the pins" "0" pins_for sg-crun-ro
expect "crun: a policy of many patterns (a large DFA): read, write denied" "Linux
sh: write error: Operation not permitted
write-denied" run_crun sg-crun-patterns "$MANY_PATTERNS" "$PROBE_CMD"
expect "crun: no annotation, unguarded" "Linux
write-ok" run_crun sg-crun-plain '{}' "$PROBE_CMD"
finish
