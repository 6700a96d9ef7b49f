#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The hook's tamper analysis: a container that can reach bpf(2) with
# CAP_SYS_ADMIN, or that sees the host's bpffs, could detach its guard; the
# node config says what to do.
. "$(dirname "$0")/lib.sh"

echo '{ "version": 1, "tamper": "refuse" }' >"$SYSCTL_GUARD_CONFIG"
RO=$(json_annotation io.sysctl-guard.profile read-only)

# with_config ID PYTHON: make a bundle, let PYTHON edit its config `c`, run it.
run_edited() {
	local id=$1 edit=$2
	make_bundle "$WORK/$id" "$WORK/rootfs" "$SG" createRuntime "$RO" "$(json_args 'echo started')"
	python3 - "$WORK/$id/config.json" "$edit" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
	CONTAINERS+=("$id")
	runc run --bundle "$WORK/$id" "$id" </dev/null 2>&1
}

ADMIN='
for s in ("bounding", "effective", "permitted"):
    c["process"]["capabilities"][s].append("CAP_SYS_ADMIN")
c["linux"].pop("seccomp", None)'
BLOCKED="$ADMIN"'
c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
    {"names": ["bpf"], "action": "SCMP_ACT_ERRNO"}]}'
ALLOWLIST="$ADMIN"'
c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [
    {"names": ["read", "write", "bpf"], "action": "SCMP_ACT_ALLOW"}]}'

expect "default capabilities: the container starts" "started" run_edited sg-tamper-default 'pass'
expect_match "CAP_SYS_ADMIN and no seccomp: refused with our message" \
	"could detach its own guard; refusing" run_edited sg-tamper-admin "$ADMIN"
expect "CAP_SYS_ADMIN but seccomp blocks bpf(2): the container starts" "started" \
	run_edited sg-tamper-blocked "$BLOCKED"
expect_match "CAP_SYS_ADMIN and a seccomp allowlist with bpf(2): refused" \
	"could detach its own guard" run_edited sg-tamper-allowlist "$ALLOWLIST"

# crun grants capabilities written in libcap's spelling or as numbers too.
LOWER='
for s in ("bounding", "effective", "permitted"):
    c["process"]["capabilities"][s].append("cap_sys_admin")
c["linux"].pop("seccomp", None)'
NUMBER='
for s in ("bounding",):
    c["process"]["capabilities"][s].append("21")
c["linux"].pop("seccomp", None)'
expect_match "cap_sys_admin in lower case: refused" "could detach its own guard" \
	run_edited sg-tamper-lower "$LOWER"
expect_match "CAP_SYS_ADMIN by its number: refused" "could detach its own guard" \
	run_edited sg-tamper-number "$NUMBER"

# No capability is needed to unlink a pin: a container that sees the host's
# bpffs could remove its guard's link.
BPFFS='
c["mounts"].append({"destination": "/sys/fs/bpf", "type": "bind", "source": "/sys/fs/bpf",
                    "options": ["rbind", "rw"]})'
SYSFS='
c["mounts"].append({"destination": "/host-sys", "type": "bind", "source": "/sys",
                    "options": ["rbind", "ro"]})'
PLAIN_SYSFS='
c["mounts"].append({"destination": "/host-sys", "type": "bind", "source": "/sys",
                    "options": ["bind", "ro"]})'
expect_match "a bind of the host's bpffs: refused, the mount named" \
	"mounts /sys/fs/bpf, which shows it the host's bpffs" run_edited sg-tamper-bpffs "$BPFFS"
expect_match "a recursive bind of /sys: refused" "mounts /sys, which shows it" \
	run_edited sg-tamper-sysfs "$SYSFS"
expect "a plain bind of /sys (no bpffs under it): the container starts" "started" \
	run_edited sg-tamper-plain-sysfs "$PLAIN_SYSFS"

echo '{ "version": 1, "tamper": "warn" }' >"$SYSCTL_GUARD_CONFIG"
expect "tamper: warn lets it start" "started" run_edited sg-tamper-warn "$ADMIN"
finish
