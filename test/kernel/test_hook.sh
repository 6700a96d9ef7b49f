#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `sysctl-guard hook` driven directly: state on stdin, stages, cgroup
# resolution, bad input, self-confinement, and 100 hooks at once.
. "$(dirname "$0")/lib.sh"

export SYSCTL_GUARD_CONFIG=$TMPDIR_TEST/config.json
echo '{ "version": 1 }' >"$SYSCTL_GUARD_CONFIG"
write_in() { "$SG_IO" --cgroup "$1" --uts write kernel/domainname x; }
RO='{"io.sysctl-guard.profile": "read-only"}'

container hook-a "$RO"
hook_status() { state hook-a created "$PID" | "$SG" hook createRuntime; echo $?; }
expect "createRuntime from argv attaches, quietly" "0" hook_status
expect "the guard is attached to the process's cgroup" "EPERM" write_in "$CG"
expect "status names the container" "1" sh -c "\"$SG\" status --container hook-a --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'"
expect "poststop (stage from the environment) removes it" "0 ok" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state hook-a stopped 0 | stage=poststop \"$SG\" hook; echo -n \"\$? \"; \"$SG_IO\" --cgroup $CG --uts write kernel/domainname x"

# poststop finds its guard through the index of guards by container, dots in the id included.
DOTTED=hook.dot.$$
container "$DOTTED" "$RO"
INDEX=/sys/fs/bpf/sysctl-guard/containers/hook:dot:$$
expect "createRuntime indexes the guard by container id" "EPERM ../$(stat -c %i "$CG")" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state $DOTTED created $PID | \"$SG\" hook createRuntime; \"$SG_IO\" --cgroup $CG --uts write kernel/domainname x | tr '\n' ' '; readlink $INDEX"
expect "poststop removes the guard and its index link" "ok gone" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state $DOTTED stopped 0 | \"$SG\" hook poststop; \"$SG_IO\" --cgroup $CG --uts write kernel/domainname x | tr '\n' ' '; [ -e $INDEX ] || [ -L $INDEX ] && echo left || echo gone"

# An id longer than the 71 characters a guard's meta keeps (containerd's may
# be): found by the whole id, in status and at poststop.
LONG=hook-long-$$-$(printf 'x%.0s' $(seq 80))
container "$LONG" "$RO"
expect "createRuntime with a long container id guards" "EPERM" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state $LONG created $PID | \"$SG\" hook createRuntime; \"$SG_IO\" --cgroup $CG --uts write kernel/domainname x"
expect "status finds it by the whole id" "1" sh -c "\"$SG\" status --container $LONG --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'"
expect "poststop removes it" "0 ok" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state $LONG stopped 0 | \"$SG\" hook poststop; echo -n \"\$? \"; \"$SG_IO\" --cgroup $CG --uts write kernel/domainname x"

# Two containers in one cgroup (runc allows it) share its guard: the second
# may not replace the first's policy (a wider one would widen it), and its
# poststop leaves the first's guard in place. Nor may a container replace a
# guard an operator made with `attach`.
container hook-share-a "$RO"
SHARED=$CG
state hook-share-a created "$PID" | "$SG" hook createRuntime
OPEN_ANN='{"io.sysctl-guard.policy": "{\"version\": 1, \"default\": \"read-write\"}"}'
printf '{"ociVersion": "1.0.2", "annotations": %s, "linux": {"cgroupsPath": "%s"}}\n' \
	"$OPEN_ANN" "${SHARED#$CG_ROOT}" >"$BUNDLE/config.json"
second_in_shared() {
	state hook-share-b created "$PID" | "$SG" hook createRuntime 2>"$TMPDIR_TEST/share.err"
	echo "$? $(grep -c 'is guarded for container hook-share-a' "$TMPDIR_TEST/share.err") $(write_in "$SHARED")"
}
expect "a second container in a guarded cgroup: exit 1, said why, the first's guard stays" \
	"1 1 EPERM" second_in_shared
expect "the second's poststop leaves the first's guard" "EPERM" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state hook-share-b stopped 0 | \"$SG\" hook poststop; \"$SG_IO\" --cgroup $SHARED --uts write kernel/domainname x"
state hook-share-a stopped 0 | "$SG" hook poststop
attach "$SHARED" "$(policy operator '{ "version": 1, "default": "read" }')"
over_operator() {
	state hook-share-a created "$PID" | "$SG" hook createRuntime 2>"$TMPDIR_TEST/op.err"
	echo "$? $(grep -c 'guarded by `sysctl-guard attach`' "$TMPDIR_TEST/op.err")"
}
expect "a container in a cgroup an operator guarded: exit 1, said why" "1 1" over_operator
"$SG" detach --cgroup "$SHARED" >/dev/null

container hook-b "$RO"
expect "prestart with a dead pid falls back to linux.cgroupsPath" "EPERM" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state hook-b created 999999 | \"$SG\" hook prestart && \"$SG_IO\" --cgroup $CG --uts write kernel/domainname x"
state hook-b stopped 0 | "$SG" hook poststop

# The systemd form of linux.cgroupsPath, slice:prefix:name.
SLICE_DIR=$CG_ROOT/sgtest.slice/sgtest-hook.slice
mkdir -p "$SLICE_DIR/sghook-e.scope"
CGROUPS+=("$CG_ROOT/sgtest.slice" "$SLICE_DIR" "$SLICE_DIR/sghook-e.scope")
container hook-e "$RO" "sgtest-hook.slice:sghook:e"
expect "a dead pid and a systemd cgroupsPath: the slice's scope is guarded" "EPERM" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state hook-e created 999999 | \"$SG\" hook createRuntime && \"$SG_IO\" --cgroup $SLICE_DIR/sghook-e.scope --uts write kernel/domainname x"
state hook-e stopped 0 | "$SG" hook poststop

# When the kernel refuses: fail closed by default, a warning with on_unsupported: skip.
UNIQUE_POLICY=$(python3 -c 'import json,sys; print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "rules": [{"name": "kernel.sg_hook_f_" + sys.argv[1], "access": "none"}]})}))' "$$")
container hook-f "$UNIQUE_POLICY"
# refused FAULT PATTERN: the hook's exit status with that fault injected, and
# how many lines of its stderr match PATTERN.
refused() { state hook-f created "$PID" | SYSCTL_GUARD_FAULT=$1 "$SG" hook createRuntime >/dev/null 2>"$TMPDIR_TEST/f.err"; echo "$? $(grep -c "$2" "$TMPDIR_TEST/f.err")"; }
unsupported() { refused prog_load "$1"; }
expect "a kernel failure stops the container (exit 2)" "2 1" unsupported "error: the kernel refused"
# A kernel without a feature guarding needs: the hook names it (a fault
# stands in for a kernel before 5.8; the matrix's oldest is 6.1).
lacking() { refused no_ringbuf "$1"; }
expect "a kernel lacking a feature stops the container (exit 2), naming it" "2 1" lacking "lacks BPF ring buffers (Linux 5.8)"
echo '{ "version": 1, "on_unsupported": "skip" }' >"$SYSCTL_GUARD_CONFIG"
expect "on_unsupported: skip lets it run unguarded, with a warning" "0 1" unsupported "warning: .*unguarded"
expect "... and so does a kernel lacking a feature" "0 1" lacking "warning: .*lacks BPF ring buffers.*unguarded"
# skip is for a kernel that cannot guard at all, not for a failure on the way.
failing() { state hook-f created "$PID" | SYSCTL_GUARD_FAULT=$1 "$SG" hook createRuntime >/dev/null 2>&1; echo $?; }
expect "... but not a table that cannot be filled, a pin or a rename that fails: exit 2 each" "2 2 2" \
	sh -c "$(declare -f failing state); BUNDLE=$BUNDLE; PID=$PID; SG=\"$SG\"; echo \$(failing map_update) \$(failing pin) \$(failing rename)"
# A policy that does not parse is the user's error whatever the kernel can do.
container hook-g '{"io.sysctl-guard.policy": "{\"version\": 1, \"rules\": 5}"}'
bad_policy() { state hook-g created "$PID" | SYSCTL_GUARD_FAULT=prog_load "$SG" hook createRuntime 2>&1 >/dev/null | grep -c "rules"; echo "exit ${PIPESTATUS[1]}"; }
expect "... but not a policy that does not parse: exit 1, naming it" "1
exit 1" bad_policy
# Nor one too complex, the kernel failing first.
COMPLEX_P=$(python3 -c 'import json,sys
rules = [{"name": "net.ipv6.conf.sgc%d*.mtu" % i, "access": "none"} for i in range(300)]
rules.append({"name": "**.a" + ".*" * 19, "access": "none"})
print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "rules": rules})}))')
container hook-x "$COMPLEX_P"
too_complex() { # FAULTS: what the hook said of it, and its exit status
	state hook-x created "$PID" | SYSCTL_GUARD_FAULT=$1 "$SG" hook createRuntime 2>&1 >/dev/null |
		grep -c "policy too complex"
	echo "exit ${PIPESTATUS[1]}"
}
expect "... nor one too complex, the kernel failing first: exit 1" "1
exit 1" too_complex prog_load
# The hook's compile of many patterns: the DFA's error comes out before
# anything is attached, and a DFA that builds decides in the kernel.
expect "a policy too complex, through the hook: exit 1, said so" "1
exit 1" too_complex none
expect "... nothing attached" "0" sh -c "bpftool cgroup show \"$CG\" 2>/dev/null | grep -c sysctl"
PATTERNS_P=$(python3 -c 'import json,sys
rules = [{"name": "net.ipv6.conf.sgd%d*.mtu" % i, "access": "none"} for i in range(300)]
rules.append({"name": "kernel.domainnam?", "access": "read"})
rules.append({"name": "kernel.sg_deferred_" + sys.argv[1], "access": "none"})
print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "default": "read-write", "rules": rules})}))' "$$")
container hook-d "$PATTERNS_P"
deferred() { state hook-d created "$PID" | SYSCTL_GUARD_FAULT=$1 "$SG" hook createRuntime >/dev/null 2>&1; echo $?; }
expect "a new policy of many patterns: its tables' map failing, exit 2" "2" deferred fill_tables
expect "... nothing attached" "ok" io "$CG" --uts write kernel/domainname x
expect "a new policy of many patterns attaches" "0" deferred none
expect "... and its DFA decides in the kernel: a pattern's read-only name" "EPERM" write_in "$CG"
expect "... and a name no rule has, by the default" "ok" io "$CG" --uts write kernel/hostname x
echo '{ "version": 1 }' >"$SYSCTL_GUARD_CONFIG"

# SYSCTL_GUARD_TIMING=1 (timing.h): a policy new on the node goes through every phase.
UNIQUE_T=$(python3 -c 'import json,sys; print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "rules": [{"name": "kernel.sg_hook_t_" + sys.argv[1], "access": "none"}]})}))' "$$")
container hook-t "$UNIQUE_T"
timed_hook() { state hook-t created "$PID" | SYSCTL_GUARD_TIMING=1 "$SG" hook createRuntime 2>&1 >/dev/null | grep -cE "$1"; }
expect "SYSCTL_GUARD_TIMING=1: the hook reports its phases" "1" timed_hook \
	'^sysctl-guard: timing: setup [0-9.]+ parse [0-9.]+ compile [0-9.]+ tables [0-9.]+ attach [0-9.]+ exit [0-9.]+ ms$'
state hook-t stopped 0 | "$SG" hook poststop

container hook-c '{}'
expect "no baseline and no annotation: exit 0, nothing attached" "0 0" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state hook-c created $PID | \"$SG\" hook createRuntime; echo -n \"\$? \"; bpftool cgroup show $CG | grep -c sysctl"

# attach does not replace a container's guard (it holds the node's baseline,
# and the container's poststop would no longer find it).
container "hook-own-$$" '{"io.sysctl-guard.profile": "read-only"}'
hook_created "hook-own-$$" >/dev/null
expect "attach over a container's guard: exit 1, naming the container" "1 yes" sh -c \
	"out=\$(\"$SG\" attach --cgroup \"$CG\" --profile audit 2>&1); echo \$? \$(echo \"\$out\" | grep -q 'guarded for container hook-own-$$ by its hook' && echo yes)"
expect "... and the container's guard still denies" "EPERM" io "$CG" --uts write kernel/domainname x
state "hook-own-$$" stopped 0 | "$SG" hook poststop

# An id too long to name an index link (runc takes up to 1024 bytes) is
# found at poststop by a scan of the guards.
LONG_ID=$(printf 'sg-long-%s-' "$$"; head -c 300 /dev/zero | tr '\0' x)
container hook-long '{"io.sysctl-guard.profile": "read-only"}'
state "$LONG_ID" created "$PID" | "$SG" hook createRuntime 2>/dev/null
expect "a 300-byte id: guarded" "EPERM" io "$CG" --uts write kernel/domainname x
state "$LONG_ID" stopped 0 | "$SG" hook poststop 2>/dev/null
expect "... and its poststop removes the guard" "ok" io "$CG" --uts write kernel/domainname x

# The learn annotation is true or false; anything else is an error, not a silent no.
container "hook-learnyes-$$" '{"io.sysctl-guard.profile": "read-only", "io.sysctl-guard.learn": "yes"}'
expect "io.sysctl-guard.learn=yes: exit 1, said so" "1 yes" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; out=\$(state hook-learnyes-$$ created $PID | \"$SG\" hook createRuntime 2>&1); echo \$? \$(echo \"\$out\" | grep -q 'io.sysctl-guard.learn: \"yes\" is not true or false' && echo yes)"

# Annotations that ask for what the container would not get: exit 1, said
# why, nothing attached. A misspelt one, and learning or a mode without a
# policy of the container's own.
hook_says() { # ID CONFIG: the hook's exit status and the first line it wrote
	local out
	out=$(state "$1" created "$PID" | "$SG" hook --config "$2" createRuntime 2>&1)
	echo "$? $(echo "$out" | head -1 | sed 's/^.*error: //; s/^sysctl-guard: //')"
}
echo '{ "version": 1 }' >"$TMPDIR_TEST/plain.json"
echo '{ "version": 1, "baseline": "k8s-safe" }' >"$TMPDIR_TEST/base-k8s.json"
container "hook-typo-$$" '{"io.sysctl-guard.profle": "deny-all"}'
expect "a misspelt annotation: exit 1, naming it, and no guard" \
	"1 annotation io.sysctl-guard.profle is not one of sysctl-guard's (io.sysctl-guard.profile, io.sysctl-guard.policy, io.sysctl-guard.mode, io.sysctl-guard.learn, io.sysctl-guard.events): is it misspelt?
ok" sh -c "$(declare -f hook_says state); BUNDLE=$BUNDLE PID=$PID SG=$SG; hook_says hook-typo-$$ $TMPDIR_TEST/plain.json; \"$SG_IO\" --cgroup $CG --uts write kernel/domainname x"
container "hook-learnonly-$$" '{"io.sysctl-guard.learn": "true"}'
expect "learn=true and no policy: exit 1, saying what to add" \
	"1 annotation io.sysctl-guard.learn needs a policy, and the container has none: name one with io.sysctl-guard.profile (the built-in profile audit allows and records everything) or io.sysctl-guard.policy" \
	sh -c "$(declare -f hook_says state); BUNDLE=$BUNDLE PID=$PID SG=$SG; hook_says hook-learnonly-$$ $TMPDIR_TEST/plain.json"
container "hook-modeonly-$$" '{"io.sysctl-guard.mode": "audit"}'
expect "mode=audit beside a baseline alone: exit 1 (an annotation only narrows)" \
	"1 annotation io.sysctl-guard.mode=audit sets the mode of the container's own policy (io.sysctl-guard.profile or io.sysctl-guard.policy), and it has none; the node's baseline is not audited at a container's request" \
	sh -c "$(declare -f hook_says state); BUNDLE=$BUNDLE PID=$PID SG=$SG; hook_says hook-modeonly-$$ $TMPDIR_TEST/base-k8s.json"
echo '{ "version": 1, "baseline": "audit" }' >"$TMPDIR_TEST/base-audit.json"
container "hook-modeenf-$$" '{"io.sysctl-guard.mode": "enforce"}'
expect "... while mode=enforce makes an audited baseline enforce" "0 EPERM" \
	sh -c "$(declare -f hook_says state); BUNDLE=$BUNDLE PID=$PID SG=$SG; echo \$(hook_says hook-modeenf-$$ $TMPDIR_TEST/base-audit.json) \$(\"$SG_IO\" --cgroup $CG --net write net/core/somaxconn 100)"
state "hook-modeenf-$$" stopped 0 | "$SG" hook poststop 2>/dev/null
container "hook-learnbase-$$" '{"io.sysctl-guard.learn": "true"}'
expect "... while learn=true beside a baseline learns under it" "0 " \
	sh -c "$(declare -f hook_says state); BUNDLE=$BUNDLE PID=$PID SG=$SG; hook_says hook-learnbase-$$ $TMPDIR_TEST/base-k8s.json"
state "hook-learnbase-$$" stopped 0 | "$SG" hook poststop 2>/dev/null
rm -f "/var/lib/sysctl-guard/learned/hook-learnbase-$$.json"
# The learn annotation in config.json alone (the state has none, at either
# stage): poststop writes the learned policy all the same.
container "hook-learncfg-$$" '{"io.sysctl-guard.profile": "audit", "io.sysctl-guard.learn": "true"}'
hook_created "hook-learncfg-$$" >/dev/null
io "$CG" --uts write kernel/domainname cfg >/dev/null
state "hook-learncfg-$$" stopped 0 | "$SG" hook poststop 2>/dev/null
expect "learn=true in config.json only: poststop writes the learned policy" "kernel.domainname" \
	python3 -c 'import json, sys; print(*[r["name"] for r in json.load(open(sys.argv[1]))["rules"]])' \
	"/var/lib/sysctl-guard/learned/hook-learncfg-$$.json"
rm -f "/var/lib/sysctl-guard/learned/hook-learncfg-$$.json"

# learn --container takes an id, or a prefix of exactly one; --cgroup a guarded cgroup.
LEARN_ANN='{"io.sysctl-guard.profile": "audit"}' # audit mode records accesses
container "learnpfx-$$-a" "$LEARN_ANN"
hook_created "learnpfx-$$-a" >/dev/null
container "learnpfx-$$-b2" "$LEARN_ANN" # an id that -b begins
hook_created "learnpfx-$$-b2" >/dev/null
container "learnpfx-$$-b" "$LEARN_ANN"
hook_created "learnpfx-$$-b" >/dev/null
learn_says() { "$SG" learn "$@" 2>&1 >/dev/null | head -1; }
expect "learn --container with a prefix of two ids: exit 1, said so" \
	"1 sysctl-guard: learnpfx-$$- begins the ids of several guarded containers: give more of the id (sysctl-guard status lists them)" \
	sh -c "$(declare -f learn_says); SG=\"$SG\"; out=\$(learn_says --container learnpfx-$$-); \"$SG\" learn --container learnpfx-$$- >/dev/null 2>&1; echo \"\$? \$out\""
expect "... the whole id: its policy" "learned from container learnpfx-$$-b" sh -c \
	"\"$SG\" learn --container learnpfx-$$-b | grep -o 'learned from container [^ ]*'"
# status --container: a prefix lists every id it begins, a whole id only its own.
count_status() { "$SG" status --container "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
expect "status --container with a whole id that begins another: that one" "1" count_status "learnpfx-$$-b"
expect "... with a prefix of them: all" "3" count_status "learnpfx-$$-"
# A write of a newline alone is learned as "", not as any value.
io "$CG" --uts write kernel/domainname $'\n' >/dev/null
expect "... a write of a newline alone: learned as the value \"\"" '{ "name": "kernel.domainname", "access": "read-write", "values": [""] }' \
	sh -c "\"$SG\" learn --container learnpfx-$$-b | grep -o '{ \"name\": \"kernel.domainname\".*}'"
# One with a newline inside is learned as written, and the policy takes that write.
io "$CG" --uts write kernel/hostname $'a\nb' >/dev/null
"$SG" learn --container "learnpfx-$$-b" >"$TMPDIR_TEST/newline.json" 2>/dev/null
expect "... a value with a newline inside: listed with it, and the learned policy takes that write" \
	'{ "name": "kernel.hostname", "access": "read-write", "values": ["a\nb"] }
allowed' sh -c "grep -o '{ \"name\": \"kernel.hostname\".*}' \"$TMPDIR_TEST/newline.json\"; \"$SG\" explain \"$TMPDIR_TEST/newline.json\" kernel.hostname --write \"\$(printf 'a\\nb')\" | head -1 | grep -o allowed"
for id in "learnpfx-$$-a" "learnpfx-$$-b" "learnpfx-$$-b2"; do state "$id" stopped 0 | "$SG" hook poststop 2>/dev/null; done
# Learning beside an enforcing profile: what the guard denied stays out of
# the learned policy (it would allow it), and the operator hears what.
container "learnenf-$$" '{"io.sysctl-guard.profile": "read-only", "io.sysctl-guard.learn": "true"}'
hook_created "learnenf-$$" >/dev/null
expect "learning beside read-only: a write is denied" "EPERM" write_in "$CG"
io "$CG" read kernel/ostype >/dev/null
"$SG" learn --container "learnenf-$$" >"$TMPDIR_TEST/enf.json" 2>"$TMPDIR_TEST/enf.err"
expect "... the learned policy has the read, not the denied write" "kernel.ostype read" python3 -c \
	'import json, sys; print(*(r["name"] + " " + r["access"] for r in json.load(open(sys.argv[1]))["rules"]))' \
	"$TMPDIR_TEST/enf.json"
expect "... its description counts the denial" "but for 1 access its guard denied" \
	grep -o "but for 1 access its guard denied" "$TMPDIR_TEST/enf.json"
expect "... and learn names it on stderr" 'denied: write kernel.domainname "x"' \
	grep -o 'denied: write kernel.domainname "x"' "$TMPDIR_TEST/enf.err"
state "learnenf-$$" stopped 0 | "$SG" hook poststop 2>/dev/null
rm -f "/var/lib/sysctl-guard/learned/learnenf-$$.json"
# So does a write the guard clamped: the learned policy would store what the
# guard did not. A value longer than a policy can list makes the rule allow
# any value, and learn says so.
CLAMP_ANN=$(python3 -c 'import json; print(json.dumps({"io.sysctl-guard.learn": "true", "io.sysctl-guard.policy": json.dumps({"version": 1, "default": "read", "rules": [
    {"name": "net.core.somaxconn", "access": "read-write", "range": [128, 4096], "on_violation": "clamp"},
    {"name": "kernel.domainname", "access": "read-write"}]})}))')
container "learnclamp-$$" "$CLAMP_ANN"
hook_created "learnclamp-$$" >/dev/null
io "$CG" --net write net/core/somaxconn 5 write net/core/somaxconn 200 >/dev/null
io "$CG" --uts write kernel/domainname "$(printf 'd%.0s' $(seq 150))" >/dev/null
"$SG" learn --container "learnclamp-$$" >"$TMPDIR_TEST/clamp.json" 2>"$TMPDIR_TEST/clamp.err"
expect "learning beside a clamp: the clamped write is left out, the one within range kept; a long value allows any" \
	"kernel.domainname read-write None
net.core.somaxconn read-write ['200']" python3 -c \
	'import json, sys
for r in json.load(open(sys.argv[1]))["rules"]: print(r["name"], r["access"], r.get("values"))' "$TMPDIR_TEST/clamp.json"
# Where the kernel ignores rewrites the clamp is a denial (test_rewrite.sh).
CLAMPED="rewritten or clamped"
rewrites_ignored && CLAMPED="denied"
expect "... learn names both on stderr" "$CLAMPED: write net.core.somaxconn \"5\"
 kernel.domainname" sh -c "grep -o '$CLAMPED: write net.core.somaxconn \"5\"' \"$TMPDIR_TEST/clamp.err\"; grep -A1 'cannot list' \"$TMPDIR_TEST/clamp.err\" | tail -1 | grep -o ' kernel.domainname'"
state "learnclamp-$$" stopped 0 | "$SG" hook poststop 2>/dev/null
rm -f "/var/lib/sysctl-guard/learned/learnclamp-$$.json"
expect "... and poststop forgot its record" "0" seen_records "$(stat -c %i "$CG")"
# A guard that went without a word (its pins removed by hand, say) leaves its
# record until gc forgets it; a guard attached later starts with none.
new_cgroup REC
attach "$REC" "$(policy audit '{ "version": 1, "mode": "audit", "default": "read-write" }')" || finish
io "$REC" --uts write kernel/domainname rec >/dev/null
expect "an audit guard records its accesses" "1" seen_records "$(stat -c %i "$REC")"
"$SG" detach --cgroup "$REC" >/dev/null
expect "... detach forgets them" "0" seen_records "$(stat -c %i "$REC")"
attach "$REC" "$TMPDIR_TEST/audit.json" || finish
io "$REC" --uts write kernel/domainname rec >/dev/null
rm -rf "/sys/fs/bpf/sysctl-guard/$(stat -c %i "$REC")"
"$SG" gc >/dev/null 2>&1
expect "... removed by hand, gc forgets the record" "0" seen_records "$(stat -c %i "$REC")"
"$SG" attach --cgroup "$REC" --profile read-only >/dev/null
expect "learn of a guard that does not record names its cgroup's directory" "1" sh -c \
	"\"$SG\" learn --cgroup \"$REC\" 2>&1 | grep -c 'the guard of cgroup $REC does not record accesses'"
"$SG" detach --cgroup "$REC" >/dev/null
new_cgroup UNGUARDED
expect "learn --cgroup of a cgroup without a guard: exit 1, said so" "1 sysctl-guard: no guard for cgroup $UNGUARDED" \
	sh -c "out=\$(\"$SG\" learn --cgroup \"$UNGUARDED\" 2>&1 >/dev/null); echo \"\$? \$out\""

# hook --config FILE: the node config named there, over SYSCTL_GUARD_CONFIG
# (whose config has no baseline: the container above got no guard).
echo '{ "version": 1, "baseline": "read-only" }' >"$TMPDIR_TEST/baseline.json"
container hook-cfg '{}'
expect "hook --config FILE: its baseline guards a container without annotation" "EPERM" sh -c \
	"$(declare -f state); BUNDLE=$BUNDLE; state hook-cfg created $PID | \"$SG\" hook --config \"$TMPDIR_TEST/baseline.json\" createRuntime && \"$SG_IO\" --cgroup \"$CG\" --uts write kernel/domainname x"
state hook-cfg stopped 0 | "$SG" hook poststop
expect "... and an unknown option: exit 1" "1" sh -c \
	"echo '{}' | \"$SG\" hook --bogus createRuntime 2>/dev/null; echo \$?"

bad_state() { echo '{"id": ' | "$SG" hook createRuntime 2>"$TMPDIR_TEST/err"; echo "$? $(grep -o 'state:[0-9]*:[0-9]*: invalid JSON' "$TMPDIR_TEST/err")"; }
expect "state that is not JSON: exit 1 with a position" "1 state:2:1: invalid JSON" bad_state
expect "an unknown stage: exit 1" "1" sh -c "echo '{}' | \"$SG\" hook bogus >/dev/null 2>&1; echo \$?"
# Numbers on the command line are numbers, or exit 1.
RANGE=$(policy range '{ "version": 1, "rules": [{ "name": "vm.swappiness", "access": "read-write", "range": [0, 100] }] }')
expect "explain --pos that is not a file position: exit 1" "1 1 1 1" sh -c \
	"$(declare -f usage_status); for p in abc 3x -1 4294967296; do echo -n \"\$(usage_status \"$SG\" explain \"$RANGE\" vm.swappiness --write 10 --pos \$p) \"; done | sed 's/ \$//'"
expect "explain --pos 7 of a constrained rule: denied" "denied (EPERM)" sh -c \
	"\"$SG\" explain \"$RANGE\" vm.swappiness --write 10 --pos 7 | head -1 | grep -o 'denied (EPERM)'"
expect "explain --batch with a NAME too: exit 1" "1" usage_status "$SG" explain "$RANGE" --batch vm.swappiness
expect "explain --pos of a read (no --write): exit 1" "1" usage_status "$SG" explain "$RANGE" vm.swappiness --pos 3
expect "gc --min-age -5: exit 1" "1" usage_status "$SG" gc --min-age -5
# check says what the hook would say: a policy too complex to compile is not
# valid, and a pattern that another wins for every name it matches is warned of.
python3 -c 'import json; print(json.dumps(json.loads(json.loads(__import__("sys").argv[1])["io.sysctl-guard.policy"])))' \
	"$COMPLEX_P" >"$TMPDIR_TEST/complex.json"
expect "check of a policy too complex for the hook: exit 1, said so" "1 1" sh -c \
	"\"$SG\" check \"$TMPDIR_TEST/complex.json\" 2>&1 >/dev/null | grep -c 'policy too complex' | tr '\n' ' '; \"$SG\" check \"$TMPDIR_TEST/complex.json\" >/dev/null 2>&1; echo \$?"
# A policy of many patterns is refused as too complex (exit 1), not by an
# abort for memory the compile would reserve ahead: under a 400 MB address
# space (a sanitizer's build reserves more than that for itself: not tried).
if outside_matrix "30,000 patterns in 400 MB"; then
	python3 -c 'import json, random
random.seed(1)
w = lambda: "".join(random.choice("abcdefghij") for _ in range(40))
print(json.dumps({"version": 1, "rules": [{"name": "net.a%s*.%s" % (w(), w()), "access": "none"} for _ in range(30000)]}))' \
		>"$TMPDIR_TEST/many-patterns.json"
	if (ulimit -v 400000 && "$SG" --version) >/dev/null 2>&1; then
		expect "check of 30,000 patterns in 400 MB of address space: too complex, exit 1" "1 1" sh -c \
			"ulimit -v 400000; \"$SG\" check \"$TMPDIR_TEST/many-patterns.json\" 2>&1 | grep -c 'policy too complex' | tr '\n' ' '; \"$SG\" check \"$TMPDIR_TEST/many-patterns.json\" >/dev/null 2>&1; echo \$?"
	else
		echo "note: this binary does not run in 400 MB of address space (a sanitizer's build): not tried"
	fi
fi
printf '{"version": 1, "rules": [\n{"name": "net.ipv4.**", "access": "read"},\n{"name": "net.ipv4.*", "access": "none"}]}\n' \
	>"$TMPDIR_TEST/loser.json"
expect "check warns of a pattern that never wins, and exits 0" \
	"warning: $TMPDIR_TEST/loser.json:3:1: rules[1]: never matches: another pattern wins every name it matches (one with more literal characters, or as many and listed first): rules[0] decides net.ipv4.x
0" sh -c "\"$SG\" check \"$TMPDIR_TEST/loser.json\" 2>&1 >/dev/null; echo \$?"
status_of_none() {
	"$SG" status --container "sg-none-$$" >"$TMPDIR_TEST/status-out" 2>/dev/null
	echo "$? $(wc -c <"$TMPDIR_TEST/status-out")"
}
expect "status of a container without a guard: exit 1, nothing on stdout" "1 0" status_of_none

# The hook confines itself before it parses a policy: inputs new on the node.
UNIQUE_D=$(python3 -c 'import json,sys; print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "rules": [{"name": "kernel.domainname", "access": "read"}, {"name": "kernel.sg_hook_d_" + sys.argv[1], "access": "none"}]})}))' "$$")
container hook-d "$UNIQUE_D"
# As deployed: an unlisted call fails with EPERM (the suites run strict, where it kills).
confined_run() { # ID: what the self-test said, then what a write got
	state "$1" created "$PID" | SYSCTL_GUARD_CONFINE= SYSCTL_GUARD_CONFINE_SELFTEST=1 "$SG" hook createRuntime 2>&1 |
		sed -n "s/^sysctl-guard: container $1: warning: //p"
	"$SG_IO" --cgroup "$CG" --uts write kernel/domainname x
}
expect "the confined hook cannot execve, and still attaches" "confined: execve refused: Operation not permitted
EPERM" confined_run hook-d
# The same inputs again: the policy is found by them, nothing is parsed, no
# filter is loaded. The first container holds the policy meanwhile: unused,
# another suite's `gc --min-age 0` could free it first.
D_BUNDLE=$BUNDLE
container hook-d2 "$UNIQUE_D"
expect "inputs the node has seen: no parsing, no self-confinement, and guarded" "EPERM" confined_run hook-d2
state hook-d2 stopped 0 | "$SG" hook poststop
BUNDLE=$D_BUNDLE
state hook-d stopped 0 | "$SG" hook poststop

# A policy of many patterns: the confined hook builds its DFA, and the guard
# decides by it; also a large one beside a baseline with a pattern of its own.
PATTERNS_P=$(python3 -c 'import json,sys
rules = [{"name": "net.ipv6.conf.sgh%d*.mtu" % i, "access": "none"} for i in range(int(sys.argv[2]))]
rules += [{"name": "kernel.domainnam?", "access": "read"}, {"name": "kernel.sg_hook_p_" + sys.argv[1], "access": "none"}]
print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "default": "read-write", "rules": rules})}))' "$$" 300)
container hook-p "$PATTERNS_P"
patterns_run() { # the hook's exit status, then what two writes got
	state hook-p created "$PID" | "$SG" hook createRuntime >/dev/null 2>"$TMPDIR_TEST/patterns.err"
	echo $? $("$SG_IO" --cgroup "$CG" --uts write kernel/domainname x) $("$SG_IO" --cgroup "$CG" --uts write kernel/hostname x)
}
expect "many patterns: the confined hook guards; its pattern denies, the default allows" "0 EPERM ok" patterns_run
state hook-p stopped 0 | "$SG" hook poststop
PATTERNS_P=$(python3 -c 'import json,sys
rules = [{"name": "net.ipv6.conf.sgh%d*.mtu" % i, "access": "none"} for i in range(int(sys.argv[2]))]
rules += [{"name": "kernel.domainnam?", "access": "read"}, {"name": "kernel.sg_hook_p_" + sys.argv[1], "access": "none"}]
print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "default": "read-write", "rules": rules})}))' "$$" 1400)
container hook-p "$PATTERNS_P"
KEEP_CONFIG=$(cat "$SYSCTL_GUARD_CONFIG")
echo '{ "version": 1, "log": {"level": "debug", "syslog": false},
  "baseline": {"version": 1, "default": "read-write", "rules": [{"name": "kernel.sg_base_*", "access": "none"}]} }' \
	>"$SYSCTL_GUARD_CONFIG"
expect "a large policy of many patterns and a baseline: its pattern denies, the default allows" \
	"0 EPERM ok" patterns_run
# Another container of the same inputs finds the policy in use; nothing is parsed.
P_BUNDLE=$BUNDLE
container hook-p2 "$PATTERNS_P"
in_use_run() { # the hook's exit status, what a write got, whether debug said it found the policy
	state hook-p2 created "$PID" | "$SG" hook createRuntime >/dev/null 2>"$TMPDIR_TEST/in-use.err"
	echo $? $("$SG_IO" --cgroup "$CG" --uts write kernel/domainname x) \
		$(grep -c "found by its inputs" "$TMPDIR_TEST/in-use.err")
}
expect "the same large policy again: found in use, its pattern denies" "0 EPERM 1" in_use_run
state hook-p2 stopped 0 | "$SG" hook poststop
BUNDLE=$P_BUNDLE
state hook-p stopped 0 | "$SG" hook poststop
echo "$KEEP_CONFIG" >"$SYSCTL_GUARD_CONFIG"

# The hook under valgrind's memcheck: no memory errors, no definite leaks.
# A static binary hides its allocations from memcheck: its dynamic twin runs.
VG_SG=${SG_DYNAMIC:-$SG}
if outside_matrix "memcheck of the hook" && can_valgrind "$VG_SG"; then
	SUPP=$(dirname "$0")/../valgrind.supp
	container hook-v "$RO"
	memcheck_hook() {
		state hook-v created "$PID" | valgrind --suppressions="$SUPP" --error-exitcode=9 --leak-check=full \
			--errors-for-leak-kinds=definite -q "$VG_SG" hook createRuntime >/dev/null 2>&1
		echo -n "$? "
		state hook-v stopped 0 | valgrind --suppressions="$SUPP" --error-exitcode=9 --leak-check=full \
			--errors-for-leak-kinds=definite -q "$VG_SG" hook poststop >/dev/null 2>&1
		echo $?
	}
	expect "memcheck: the hook's createRuntime and poststop are clean" "0 0" memcheck_hook
fi

# 100 hooks for 100 containers at once, each with a policy of its own
# (10 in the kernel matrix: its emulated CPU takes some 50 times as long).
MANY=100
outside_matrix "100 hooks at once" || MANY=10
declare -A CGS
for i in $(seq 1 $MANY); do
	# A policy of its own for each: even ones read-only, odd ones writable.
	if [ $((i % 2)) = 0 ]; then default=read; else default=read-write; fi
	# printf, not python3: python3 starts in 0.35 s here, a hundred of them half this test.
	a=$(printf '{"io.sysctl-guard.policy": "{\\"version\\": 1, \\"default\\": \\"%s\\", \\"rules\\": [{\\"name\\": \\"kernel.sg_many_%s_%s\\", \\"access\\": \\"none\\"}]}"}' "$default" "$i" "$$")
	container "many-$i" "$a"
	CGS[$i]=$CG
	state "many-$i" created "$PID" >"$TMPDIR_TEST/state-$i"
	cp "$BUNDLE/config.json" "$TMPDIR_TEST/config-$i"
done
HOOKS=()
for i in $(seq 1 $MANY); do
	"$SG" hook createRuntime <"$TMPDIR_TEST/state-$i" >"$TMPDIR_TEST/out-$i" 2>&1 &
	HOOKS+=($!)
done
failed=0
for i in "${!HOOKS[@]}"; do
	wait "${HOOKS[$i]}" && continue
	failed=$((failed + 1))
	echo "hook $((i + 1)) failed: $(cat "$TMPDIR_TEST/out-$((i + 1))")" >&2
done
expect "$MANY concurrent hooks all succeed" "0" echo "$failed"
bad=0
for i in $(seq 1 $MANY); do
	got=$(write_in "${CGS[$i]}")
	if [ $((i % 2)) = 0 ] && [ "$got" != EPERM ]; then bad=$((bad + 1)); fi
	if [ $((i % 2)) = 1 ] && [ "$got" != ok ]; then bad=$((bad + 1)); fi
done
expect "each of the $MANY containers has its own policy, no crosstalk" "0" echo "$bad"
expect "one guard per container" "$MANY" sh -c "\"$SG\" status --json 2>/dev/null | python3 -c 'import json,sys; print(len([g for g in json.load(sys.stdin) if g[\"container_id\"].startswith(\"many-\")]))'"
# Leftovers of these hooks, finished: others' may be mid-attach, and other
# tests make staging directories of dead pids on purpose (test_gc, test_faults).
dead_staging() {
	local ids=" " i d pid
	for i in $(seq 1 $MANY); do ids+="$(stat -c %i "${CGS[$i]}") "; done
	for d in $(ls /sys/fs/bpf/sysctl-guard | grep '^staging-'); do
		pid=${d#staging-}
		[[ $ids == *" ${pid#*-} "* ]] || continue
		kill -0 "${pid%%-*}" 2>/dev/null || echo "$d"
	done | grep -c .
}
expect "no staging directory left" "0" dead_staging
for i in $(seq 1 $MANY); do
	printf '{"id": "many-%s", "status": "stopped", "pid": 0, "bundle": "/"}' "$i" | "$SG" hook poststop
done
expect "poststop removed all $MANY" "0" sh -c "\"$SG\" status --json 2>/dev/null | python3 -c 'import json,sys; print(len([g for g in json.load(sys.stdin) if g[\"container_id\"].startswith(\"many-\")]))'"

# SIGKILL at any moment of a hook making a new large policy: no process of
# its session is left, and what is left after gc is a complete guard or
# nothing.
big_inline() { # NONCE: an annotation with a 10,302-rule inline policy no other hook has made
	python3 -c 'import json,sys
rules = [{"name": "net.ipv4.conf.sgk%d.rp_filter" % i, "access": "none"} for i in range(10000)]
rules += [{"name": "net.ipv6.conf.sgk%d*.mtu" % i, "access": "none"} for i in range(300)]  # a large DFA
rules.append({"name": "kernel.domainname", "access": "read"})
rules.append({"name": "kernel.sg_kill_" + sys.argv[1], "access": "none"})
print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "rules": rules})}))' "$1"
}
# Live processes of the session (not zombies: this init may reap orphans late or never).
left_in_session() { sleep 0.5; ps -o stat= -s "$1" | grep -vc '^Z'; }
killed_ok=0
DELAYS="0 0.004 0.008 0.012 0.016 0.024 0.032 0.05 0.08"
outside_matrix "hooks killed at nine moments" || DELAYS=""
for delay in $DELAYS; do
	container "hook-kill-$delay" "$(big_inline "$$-$delay")"
	state "hook-kill-$delay" created "$PID" >"$TMPDIR_TEST/kill-state"
	setsid sh -c "exec \"$SG\" hook createRuntime <\"$TMPDIR_TEST/kill-state\" >/dev/null 2>&1" &
	hook=$!
	sleep "$delay"
	kill -9 "$hook" 2>/dev/null
	wait "$hook" 2>/dev/null
	left=$(left_in_session "$hook")
	"$SG" gc >/dev/null 2>&1
	got=$(write_in "$CG")
	[ "$left" = 0 ] && { [ "$got" = ok ] || [ "$got" = EPERM ]; } && killed_ok=$((killed_ok + 1))
	[ "$left" = 0 ] || echo "hook killed after ${delay}s: $left of its processes left" >&2
	"$SG" detach --cgroup "$CG" >/dev/null 2>&1
done
if [ -n "$DELAYS" ]; then
	expect "a hook killed at any moment leaves no process behind, and a guard whole or none" "9" \
		echo "$killed_ok"
	expect "... and no staging directory" "0" dead_staging
fi
finish
