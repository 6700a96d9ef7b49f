#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The operator's workflow: audit a container, watch what it does, learn a
# policy from it, enforce that policy; status counters match what happened.
. "$(dirname "$0")/lib.sh"

WORKLOAD='cat /proc/sys/kernel/ostype >/dev/null; echo a.example > /proc/sys/kernel/domainname; echo 1000 > /proc/sys/net/core/somaxconn; echo done'
AUDIT=$(python3 -c 'import json; print(json.dumps({"io.sysctl-guard.profile": "audit", "io.sysctl-guard.learn": "true"}))')

"$SG" monitor --json --container sg-obs-audit >"$WORK/events.json" 2>"$WORK/monitor.err" &
MONITOR=$!
for _ in $(seq 100); do grep -q monitoring "$WORK/monitor.err" && break; sleep 0.05; done
expect "monitor --container of one not started yet says so" "1" grep -c "no guard of container sg-obs-audit yet" "$WORK/monitor.err"
# The events have one reader: a second monitor would split them with the first.
expect "a second monitor is refused: exit 2, naming the first" "2 yes" sh -c \
	"out=\$(\"$SG\" monitor 2>&1 </dev/null); echo \$? \$(echo \"\$out\" | grep -q 'another monitor (pid $MONITOR)' && echo yes)"
# So is one in another mount namespace, whose /run is its own: the lock is in bpffs, with the events.
other_ns_monitor() {
	local out
	# timeout: a monitor that takes no lock runs until stopped
	out=$(timeout 10 unshare -m sh -c 'mount -t tmpfs sg-run /run && exec "$0" monitor' "$SG" 2>&1 </dev/null)
	echo "$? $(echo "$out" | grep -c 'another monitor')"
}
expect "a monitor in another mount namespace is refused too" "2 1" other_ns_monitor
expect "audit: the workload runs" "done" run_container sg-obs-audit createRuntime "$AUDIT" "$WORKLOAD"
sleep 0.5 # the ring buffer is polled every 200 ms
kill -TERM "$MONITOR"
wait "$MONITOR"
expect "monitor stops cleanly on SIGTERM" "0" echo $?

events() {
	python3 - "$WORK/events.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    print(e["container_id"], e["access"], e["sysctl"], e.get("value", ""), e["verdict"])
PY
}
expect "monitor --json shows exactly the audited writes" "sg-obs-audit write kernel.domainname a.example audit
sg-obs-audit write net.core.somaxconn 1000 audit" events

LEARNED=/var/lib/sysctl-guard/learned/sg-obs-audit.json
expect "poststop wrote the learned policy" "yes" sh -c "[ -f $LEARNED ] && echo yes"
expect_match "check accepts the learned policy" "valid \\(3 rules" "$SG" check "$LEARNED"
expect "the learned policy lists what the workload did" "kernel.domainname read-write ['a.example']
kernel.ostype read None
net.core.somaxconn read-write ['1000']" python3 -c "
import json
for r in json.load(open('$LEARNED'))['rules']:
    print(r['name'], r['access'], r.get('values'))"

ENFORCE=$(python3 -c 'import json,sys; print(json.dumps({"io.sysctl-guard.policy": open(sys.argv[1]).read()}))' "$LEARNED")
expect "enforcing the learned policy: the same workload runs" "done" \
	run_container sg-obs-enforce createRuntime "$ENFORCE" "$WORKLOAD 2>&1"
expect "enforcing the learned policy: a new write is denied" "sh: write error: Operation not permitted" \
	run_container sg-obs-new createRuntime "$ENFORCE" 'echo 2000 > /proc/sys/net/core/somaxconn'
rm -f "$LEARNED"

# learn from a running container, and status counters against known accesses.
# Rules of their own for the names the workload touches: the runtime itself
# reads other sysctls (cap_last_cap) in the container's cgroup.
LIVE_POLICY='{"version": 1, "mode": "audit", "rules": [
  {"name": "kernel.ostype", "access": "read"},
  {"name": "kernel.domainname", "access": "read"},
  {"name": "kernel.sg_observe_'$$'", "access": "none"}]}'
LIVE=$(python3 -c 'import json,sys; print(json.dumps({"io.sysctl-guard.policy": sys.argv[1], "io.sysctl-guard.learn": "true"}))' "$LIVE_POLICY")
make_bundle "$WORK/sg-obs-live" "$WORK/rootfs" "$SG" createRuntime "$LIVE" "$(json_args 'sleep 30')"
CONTAINERS+=(sg-obs-live)
runc run -d --bundle "$WORK/sg-obs-live" sg-obs-live </dev/null >/dev/null 2>&1
# dd: exactly one read() each; the program runs once per read() and write().
runc exec sg-obs-live sh -c 'for i in 1 2 3; do dd if=/proc/sys/kernel/ostype of=/dev/null bs=64 count=1 2>/dev/null; done; echo b.example > /proc/sys/kernel/domainname'
expect_match "learn --container on a running guard" '"name": "kernel.domainname", "access": "read-write", "values": \["b.example"\]' \
	"$SG" learn --container sg-obs-live
rule_counters() {
	"$SG" status --container sg-obs-live --json 2>/dev/null | python3 -c '
import json, sys
g = json.load(sys.stdin)[0]
for r in g["rules"]:
    if r["rule"] in ("kernel.ostype", "kernel.domainname"):
        print(r["rule"], r["allow"], r["deny"], r["rewrite"], r["audit"])'
}
expect "status counters match the accesses: 3 reads allowed, 1 write audited" "kernel.ostype 3 0 0 0
kernel.domainname 0 0 0 1" rule_counters
expect_match "the guard's own totals count at least those" "^[3-9][0-9]* 0 0 1$" sh -c \
	"\"$SG\" status --container sg-obs-live --json 2>/dev/null | python3 -c 'import json,sys; c=json.load(sys.stdin)[0][\"counters\"]; print(c[\"allow\"], c[\"deny\"], c[\"rewrite\"], c[\"audit\"])'"
runc delete --force sg-obs-live >/dev/null 2>&1
rm -f /var/lib/sysctl-guard/learned/sg-obs-live.json
# Reads are reported on request (annotation io.sysctl-guard.events=reads).
READS=$(python3 -c 'import json; print(json.dumps({"io.sysctl-guard.profile": "read-only", "io.sysctl-guard.events": "reads"}))')
"$SG" monitor --json --container sg-obs-reads >"$WORK/reads.json" 2>"$WORK/reads.err" &
MONITOR=$!
for _ in $(seq 100); do grep -q monitoring "$WORK/reads.err" && break; sleep 0.05; done
run_container sg-obs-reads createRuntime "$READS" 'dd if=/proc/sys/kernel/ostype of=/dev/null bs=64 count=1 2>/dev/null' >/dev/null
sleep 0.5
kill -TERM "$MONITOR"
wait "$MONITOR"
expect "with events=reads, the read is reported" "read kernel.ostype allow" python3 -c "
import json
for line in open('$WORK/reads.json'):
    e = json.loads(line)
    if e['sysctl'] == 'kernel.ostype':
        print(e['access'], e['sysctl'], e['verdict'])"
expect_match "an unknown events value stops the container" "is not .{0,2}reads" \
	run_container sg-obs-badevents createRuntime '{"io.sysctl-guard.profile": "read-only", "io.sysctl-guard.events": "all"}' 'echo started'
finish
