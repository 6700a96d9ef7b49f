#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# clamp and rewrite, read back; audit mode never denies or rewrites.
. "$(dirname "$0")/lib.sh"

new_cgroup CG
P=$(policy rewrite '{
  "version": 1, "default": "read",
  "rules": [
    { "name": "kernel.domainname", "access": "read-write", "rewrite": "sandbox" },
    { "name": "net.core.somaxconn", "access": "read-write", "range": [128, 4096], "on_violation": "clamp" },
    { "name": "net.ipv4.ip_local_port_range", "access": "read-write",
      "range": [[20000, 30000], [40000, 60999]], "on_violation": "clamp" }
  ]}')
WARNINGS=$("$SG" attach --cgroup "$CG" --policy "$P" 2>&1) || {
	echo "FAIL: attach: $WARNINGS"
	exit 1
}
rewrites_ignored && REWRITES=ignored || REWRITES=works
# In the kernel matrix the kernel's known answer is given (test/vm/run.sh):
# the probe must find it.
if [ -n "${SG_VM_REWRITE:-}" ]; then
	expect "the rewrite probe finds what this kernel does" "$SG_VM_REWRITE" echo "$REWRITES"
fi

# degraded: where the kernel ignores bpf_sysctl_set_new_value(), rewrite and
# clamp rules deny, the value stays, and the user is told at every level.
degraded_checks() {
	local domainname somaxconn
	domainname=$(io "$CG" --uts read kernel/domainname)
	somaxconn=$(io "$CG" --net read net/core/somaxconn)
	expect_match "attach warns that rewrite and clamp rules deny" \
		"ignores bpf_sysctl_set_new_value\(\).*rewrite and clamp rules deny instead" echo "$WARNINGS"
	"$SG" monitor --json >"$TMPDIR_TEST/events.json" 2>"$TMPDIR_TEST/monitor.err" &
	local monitor=$!
	for _ in $(seq 200); do grep -q monitoring "$TMPDIR_TEST/monitor.err" && break; sleep 0.05; done
	expect "a rewrite rule denies, the value stays" "EPERM
$domainname" io "$CG" --uts write kernel/domainname evil.example read kernel/domainname
	expect "a clamp denies, the value stays" "EPERM
$somaxconn" io "$CG" --net write net/core/somaxconn 65535 read net/core/somaxconn
	expect "inside the range is kept" "ok
ok 1000" io "$CG" --net write net/core/somaxconn 1000 read net/core/somaxconn
	sleep 0.5 # the ring buffer is polled every 200 ms
	kill -TERM "$monitor"
	wait "$monitor"
	expect "the deny events say why" "kernel.domainname deny rewrite needed but this kernel ignores rewrites
net.core.somaxconn deny rewrite needed but this kernel ignores rewrites" python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["verdict"] == "deny":
        print(e["sysctl"], e["verdict"], e["reason"])' "$TMPDIR_TEST/events.json"
	expect_match "status shows the guard degraded" "\(degraded: this kernel ignores rewrites" \
		"$SG" status --cgroup "$CG"
	expect "status --json says so" "True False" sh -c "\"$SG\" status --cgroup \"$CG\" --json |
		python3 -c 'import json,sys; g=json.load(sys.stdin)[0]; print(g[\"degraded\"], g[\"rewrite_works\"])'"
}
if [ "$REWRITES" = ignored ]; then
	degraded_checks
	finish
fi
expect "status: a guard whose rewrites work is not degraded" "False" sh -c "\"$SG\" status --cgroup \"$CG\" --json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)[0][\"degraded\"])'"

expect "rewrite replaces the written value" "ok
ok sandbox" io "$CG" --uts write kernel/domainname evil.example read kernel/domainname
expect "clamp to max" "ok
ok 4096" io "$CG" --net write net/core/somaxconn 65535 read net/core/somaxconn
expect "clamp to min" "ok
ok 128" io "$CG" --net write net/core/somaxconn 5 read net/core/somaxconn
expect "inside the range is kept" "ok
ok 1000" io "$CG" --net write net/core/somaxconn 1000 read net/core/somaxconn
expect "per-field clamp" "ok
ok 20000	60999" io "$CG" --net write net/ipv4/ip_local_port_range "1024 65535" read net/ipv4/ip_local_port_range
expect "clamp still denies junk" "EPERM" io "$CG" --net write net/core/somaxconn 12abc
expect "a clamped write of four digits returns four, as written" "ok 4
ok 4096" io "$CG" --net writen net/core/somaxconn 9999 read net/core/somaxconn
# The kernel's write() returns the length of what it stores, also when that
# is longer than what was written: callers that loop until their count is
# written take it for a broken call (docs/policy.md). explain says so.
expect "a write clamped up to more digits returns the length stored" "ok 3
ok 128" io "$CG" --net writen net/core/somaxconn 5 read net/core/somaxconn
expect "... and explain says what that does to callers" "note:   write() returns 3 for the 1 byte written" \
	sh -c "\"$SG\" explain \"$P\" net.core.somaxconn --write 5 | grep -o 'note:.*written'"
expect "explain has no note for a value stored shorter (padded to the length written)" "0" \
	sh -c "\"$SG\" explain \"$P\" net.core.somaxconn --write 99999 | grep -c note"

new_cgroup AUD
A=$(policy audit '{
  "version": 1, "mode": "audit", "default": "none",
  "rules": [
    { "name": "kernel.domainname", "access": "read-write", "rewrite": "sandbox" },
    { "name": "net.core.somaxconn", "access": "read-write", "range": [128, 4096], "on_violation": "clamp" }
  ]}')
attach "$AUD" "$A" || finish
expect "audit: a read default none would deny passes" "ok Linux" io "$AUD" read kernel/ostype
expect "audit: a write a read rule would deny passes" "ok" io "$AUD" --uts write kernel/hostname audited
expect "audit: no rewrite" "ok
ok evil.example" io "$AUD" --uts write kernel/domainname evil.example read kernel/domainname
expect "audit: no clamp" "ok
ok 65535" io "$AUD" --net write net/core/somaxconn 65535 read net/core/somaxconn
expect "audit: counted as audit verdicts" "yes" sh -c "\"$SG\" status --cgroup \"$AUD\" --json 2>/dev/null | python3 -c 'import json,sys; g=json.load(sys.stdin)[0]; print(\"yes\" if g[\"counters\"][\"audit\"] >= 4 and g[\"counters\"][\"deny\"] == 0 else g)'"
finish
