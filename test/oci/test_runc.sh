#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# runc with the hook in config.json: prestart and createRuntime, exec, poststop.
. "$(dirname "$0")/lib.sh"

RO=$(json_annotation io.sysctl-guard.profile read-only)
for stage in prestart createRuntime; do
	expect "$stage: a guarded container reads and is denied a write" "Linux
sh: write error: Operation not permitted
write-denied" run_container "sg-runc-$stage" "$stage" "$RO" "$PROBE_CMD"
	expect "$stage: poststop removed the pins" "0" pins_for "sg-runc-$stage"
done

expect "a policy of many patterns (a large DFA): read, write denied" "Linux
sh: write error: Operation not permitted
write-denied" run_container sg-runc-patterns createRuntime "$MANY_PATTERNS" "$PROBE_CMD"

expect "no annotation: the container runs unguarded" "Linux
write-ok" run_container sg-runc-plain createRuntime '{}' "$PROBE_CMD"

# runc exec joins the container's cgroup: guarded too.
make_bundle "$WORK/sg-runc-exec" "$WORK/rootfs" "$SG" createRuntime "$RO" "$(json_args 'sleep 30')"
CONTAINERS+=(sg-runc-exec)
runc run -d --bundle "$WORK/sg-runc-exec" sg-runc-exec </dev/null >/dev/null 2>&1
expect "runc exec into a guarded container is guarded" "sh: write error: Operation not permitted
write-denied" runc exec sg-runc-exec sh -c '(echo y > /proc/sys/kernel/domainname) 2>&1 && echo write-ok || echo write-denied'
expect "status lists the running container's guard" "1" pins_for sg-runc-exec
runc delete --force sg-runc-exec >/dev/null 2>&1
expect "runc delete runs poststop: no pins left" "0" pins_for sg-runc-exec

# A bad policy: the container does not start, and the runtime shows why.
BAD=$(json_annotation io.sysctl-guard.policy '{"version": 1, "rules": [{"name": "net.core.somaxconn", "access": "read-write", "range": [5000, 4096]}]}')
expect_match "a bad inline policy stops the container with our message" \
	"min 5000 is greater than max 4096" run_container sg-runc-bad createRuntime "$BAD" 'echo started'

BADNAME=$(json_annotation io.sysctl-guard.profile ../etc/passwd)
expect_match "a profile name that is a path is rejected" "profile" run_container sg-runc-badname createRuntime "$BADNAME" 'echo started'

# Two containers with different policies at once: no crosstalk.
make_bundle "$WORK/sg-runc-a" "$WORK/rootfs" "$SG" createRuntime "$RO" "$(json_args 'sleep 30')"
AUDIT=$(json_annotation io.sysctl-guard.profile audit)
make_bundle "$WORK/sg-runc-b" "$WORK/rootfs" "$SG" createRuntime "$AUDIT" "$(json_args 'sleep 30')"
CONTAINERS+=(sg-runc-a sg-runc-b)
runc run -d --bundle "$WORK/sg-runc-a" sg-runc-a </dev/null >/dev/null 2>&1
runc run -d --bundle "$WORK/sg-runc-b" sg-runc-b </dev/null >/dev/null 2>&1
W='(echo z > /proc/sys/kernel/domainname) 2>&1 && echo write-ok || echo write-denied'
expect "container a (read-only) is denied" "sh: write error: Operation not permitted
write-denied" runc exec sg-runc-a sh -c "$W"
expect "container b (audit) is allowed" "write-ok" runc exec sg-runc-b sh -c "$W"

# linux.sysctl pairs are always allowed: runc writes them from inside the cgroup.
expect "linux.sysctl of config.json is written under a deny-all profile" "Linux
sg.example" run_container sg-runc-sysctl createRuntime "$(json_annotation io.sysctl-guard.profile read-only)" \
	'cat /proc/sys/kernel/ostype; cat /proc/sys/kernel/domainname' '{"kernel.domainname": "sg.example"}'
# A profile preloaded before its first container: the hook finds its policy
# by its inputs (debug log, through a wrapper that keeps the hook's stderr).
PRE=runc-preload-$$
printf '{"version": 1, "default": "read", "rules": [{"name": "kernel.sg_runc_preload_%s", "access": "none"}]}\n' \
	"$$" >"$WORK/profiles/$PRE.json"
echo '{ "version": 1, "profiles_dir": "'"$WORK"'/profiles", "log": {"level": "debug", "syslog": false} }' >"$SYSCTL_GUARD_CONFIG"
KEY=$("$SG" preload "$PRE" | sed -n 's/.*: policy \([^ ]*\) .*/\1/p')
trap 'rm -f /sys/fs/bpf/sysctl-guard/policies/$KEY/preloaded:profile:$PRE; cleanup' EXIT
printf '#!/bin/sh\nexec "%s" "$@" 2>>"%s"\n' "$SG" "$WORK/hook.log" >"$WORK/hook-logged"
chmod +x "$WORK/hook-logged"
make_bundle "$WORK/sg-runc-pre" "$WORK/rootfs" "$WORK/hook-logged" createRuntime \
	"$(json_annotation io.sysctl-guard.profile "$PRE")" "$(json_args "$PROBE_CMD")"
CONTAINERS+=(sg-runc-pre)
expect "a preloaded profile's first container is guarded by it" "Linux
sh: write error: Operation not permitted
write-denied" sh -c "runc run --bundle \"$WORK/sg-runc-pre\" sg-runc-pre </dev/null 2>&1"
expect "... found by its inputs (nothing parsed at its start): the preloaded policy" "1 1" \
	sh -c "echo \$(grep -c 'policy $KEY found by its inputs' \"$WORK/hook.log\") \$(grep -c 'guarded .*policy $KEY)' \"$WORK/hook.log\")"
echo '{ "version": 1, "profiles_dir": "'"$WORK"'/profiles" }' >"$SYSCTL_GUARD_CONFIG"

# The hook as runc runs it, under valgrind's memcheck: a memory error or a
# definite leak makes it exit 9, and the container does not start. A static
# binary hides its allocations from memcheck: its dynamic twin runs.
VG_SG=${SG_DYNAMIC:-$SG}
if can_valgrind "$VG_SG"; then
	cat >"$WORK/hook-memcheck" <<SH
#!/bin/sh
exec valgrind --suppressions=$(cd "$(dirname "$0")/.." && pwd)/valgrind.supp --error-exitcode=9 \\
	--leak-check=full --errors-for-leak-kinds=definite -q "$VG_SG" "\$@"
SH
	chmod +x "$WORK/hook-memcheck"
	make_bundle "$WORK/sg-runc-vg" "$WORK/rootfs" "$WORK/hook-memcheck" createRuntime "$RO" "$(json_args "$PROBE_CMD")"
	CONTAINERS+=(sg-runc-vg)
	expect "memcheck: the hook under runc is clean, and guards" "Linux
sh: write error: Operation not permitted
write-denied" sh -c "runc run --bundle \"$WORK/sg-runc-vg\" sg-runc-vg </dev/null 2>&1 | grep -v 'unhandled eBPF'"
	expect "memcheck: poststop removed the pins" "0" pins_for sg-runc-vg
fi
finish
