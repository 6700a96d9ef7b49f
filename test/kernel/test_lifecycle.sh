#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# detach, replace, nesting, pins and status.
. "$(dirname "$0")/lib.sh"

DENY=$(policy deny '{ "version": 1, "default": "read" }')
ALLOW=$(policy allow '{ "version": 1, "default": "read-write" }')

programs_on() {
	bpftool cgroup show "$1" 2>/dev/null | grep -c sysctl
}

new_cgroup CG
attach "$CG" "$DENY" || finish
expect "guarded: write denied" "EPERM" io "$CG" --uts write kernel/domainname x
expect "one program attached" "1" programs_on "$CG"
CGID=$(stat -c %i "$CG")
expect "guard pinned by cgroup id" "yes" sh -c "[ -e /sys/fs/bpf/sysctl-guard/$CGID/link ] && echo yes"

attach "$CG" "$ALLOW" || finish
expect "second attach replaces the first" "ok" io "$CG" --uts write kernel/domainname x
expect "still one program attached" "1" programs_on "$CG"
expect "status shows one guard for the cgroup" "1" sh -c "\"$SG\" status --cgroup \"$CG\" --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'"

attach "$CG" "$DENY" || finish
expect "and back" "EPERM" io "$CG" --uts write kernel/domainname x

# SYSCTL_GUARD_TIMING=1 (timing.h): the phases, in the order they ended, and nothing without it.
PHASES='^sysctl-guard: timing: parse [0-9.]+ compile [0-9.]+ tables [0-9.]+ attach [0-9.]+ exit [0-9.]+ ms$'
expect "SYSCTL_GUARD_TIMING=1: attach reports its phases" "1" sh -c \
	"SYSCTL_GUARD_TIMING=1 \"$SG\" attach --cgroup \"$CG\" --policy \"$DENY\" 2>&1 >/dev/null | grep -cE '$PHASES'"
expect "without it, no timing" "0" sh -c \
	"\"$SG\" attach --cgroup \"$CG\" --policy \"$DENY\" 2>&1 >/dev/null | grep -c 'timing:'"

mkdir "$CG/child"
attach "$CG/child" "$ALLOW" || finish
expect "an allow-all guard in a nested cgroup does not widen" "EPERM" io "$CG/child" --uts write kernel/domainname x
expect "two programs apply to the nested cgroup" "2" sh -c "bpftool cgroup show \"$CG/child\" effective | grep -c sysctl"
"$SG" detach --cgroup "$CG/child" >/dev/null
expect "status of the unguarded child names its guarded ancestor" \
	"sysctl-guard: no guard for $CG/child; its ancestor $CG is guarded, and that guard applies to it too" \
	sh -c "\"$SG\" status --cgroup \"$CG/child\" 2>&1 >/dev/null"

expect "detach reports the guard" "removed the guard of $CG" "$SG" detach --cgroup "$CG"
expect "detach restores access" "ok" io "$CG" --uts write kernel/domainname x
expect "no program left" "0" programs_on "$CG"
expect "no pin left" "no" sh -c "[ -e /sys/fs/bpf/sysctl-guard/$CGID ] && echo yes || echo no"
expect "detach of an unguarded cgroup" "$CG had no guard" "$SG" detach --cgroup "$CG"

# Status names each rule as written, the longest a policy may have among them.
LONG="net.ipv4.conf.$(printf 'x%.0s' $(seq 100)).rp_filter"
NAMED=$(policy named '{ "version": 1, "rules": [
  { "name": "kernel.ostype", "access": "read" },
  { "name": "'"$LONG"'", "access": "none" },
  { "name": "kernel.*", "access": "read" } ] }')
attach "$CG" "$NAMED" || finish
expect "status names the rules as written" "kernel.ostype $LONG kernel.*" sh -c "\"$SG\" status --cgroup \"$CG\" --json 2>/dev/null | python3 -c 'import json,sys; print(*[r[\"rule\"] for r in json.load(sys.stdin)[0][\"rules\"][:3]])'"
# ... every one of a policy whose names fill more than one of the windows
# the rule names' table is written through (512 KiB, tables.c).
MANY=$(python3 -c 'import json
rules = [{"name": "net.ipv4.conf.sg%06d-%s.rp_filter" % (i, "n" * (i % 12)), "access": "read"}
         for i in range(20000)]
print(json.dumps({"version": 1, "default": "read", "rules": rules}))' >"$TMPDIR_TEST/many.json" &&
	echo "$TMPDIR_TEST/many.json")
attach "$CG" "$MANY" || finish
expect "status names each of 20,000 rules as written (790 KB of names)" "same" sh -c \
	"\"$SG\" status --cgroup \"$CG\" --json 2>/dev/null | python3 -c 'import json,sys
names = [r[\"rule\"] for r in json.load(sys.stdin)[0][\"rules\"]]
want = [r[\"name\"] for r in json.load(open(sys.argv[1]))[\"rules\"]]
print(\"same\" if names[:len(want)] == want else \"differ: %d names, %d wanted\" % (len(names), len(want)))' \"$MANY\""
# status names a guard by its cgroup's directory, the one --cgroup takes.
expect "status --json: the cgroup's directory and id" "$CG $(stat -c %i "$CG")" sh -c \
	"\"$SG\" status --cgroup \"$CG\" --json 2>/dev/null | python3 -c 'import json,sys; g=json.load(sys.stdin)[0]; print(g[\"cgroup\"], g[\"cgroup_id\"])'"
expect "status: the directory in the CGROUP column" "$CG" sh -c \
	"\"$SG\" status | awk -v cg=\"$CG\" '\$1 == cg { print \$1 }'"
"$SG" detach --cgroup "$CG" >/dev/null

# A guard whose cgroup is removed is found and removed by gc.
new_cgroup GONE
attach "$GONE" "$DENY" || finish
GONEID=$(stat -c %i "$GONE")
# Until then status shows it by id: its directory is gone. Under the pins
# lock, held shared as a hook holds it, no other suite's gc takes it first.
expect "status of a removed cgroup's guard: no directory, its id" "None
(id $GONEID)" flock -s /sys/fs/bpf/sysctl-guard sh -c "rmdir \"$GONE\"; \
	\"$SG\" status --json 2>/dev/null | python3 -c 'import json,sys; print(*[g[\"cgroup\"] for g in json.load(sys.stdin) if g[\"cgroup_id\"] == $GONEID])'; \"$SG\" status | awk '\$1 == \"(id\" && \$2 == \"$GONEID)\" { print \$1, \$2 }'"
# The kernel detaches the link when it releases the cgroup, a moment after
# rmdir. (Another test's gc may be the one that removes it.)
gc_until_removed() {
	for _ in $(seq 50); do
		"$SG" gc >/dev/null 2>&1
		[ -e "/sys/fs/bpf/sysctl-guard/$GONEID" ] || { echo removed; return; }
		sleep 0.1
	done
}
expect "gc removes the guard of a removed cgroup" "removed" gc_until_removed

expect "attach, detach and status of a cgroup that is not there: exit 1, said so" "1 1 1 3" sh -c \
	"for c in 'attach --policy $DENY' detach status; do \"$SG\" \$c --cgroup $CG_ROOT/sg-none-$$ >/dev/null 2>>$TMPDIR_TEST/none.err; echo -n \"\$? \"; done; grep -c 'sg-none-$$: no such directory; a cgroup is a directory under the cgroup2 mount' $TMPDIR_TEST/none.err"
expect "... and of a directory that is not a cgroup: exit 1, said so" "1 1" sh -c \
	"\"$SG\" status --cgroup $TMPDIR_TEST 2>&1 | grep -c 'is not a cgroup directory; a cgroup is a directory under the cgroup2 mount' | tr '\n' ' '; \"$SG\" attach --cgroup $TMPDIR_TEST --policy $DENY >/dev/null 2>&1; echo \$?"
# A cgroup v1 directory: a mounted v1 hierarchy, or a named one of our own
# (a node booted with cgroup v2 alone has none).
V1=$(awk '$0 ~ / - cgroup / { print $5; exit }' /proc/self/mountinfo)
if [ -z "$V1" ]; then
	V1=$TMPDIR_TEST/v1
	mkdir "$V1" && mount -t cgroup -o none,name=sg-test-$$ sg-test "$V1"
fi
expect "attach to a cgroup v1 directory fails with exit 2" "2" sh -c "\"$SG\" attach --cgroup \"$V1\" --policy \"$DENY\" >/dev/null 2>&1; echo \$?"
[ "$V1" = "$TMPDIR_TEST/v1" ] && umount "$V1"
expect "attach with a missing policy fails with exit 1" "1" sh -c "\"$SG\" attach --cgroup \"$CG\" --policy /nonexistent.json >/dev/null 2>&1; echo \$?"
expect "a failed attach leaves nothing attached" "0" programs_on "$CG"
expect "attach to the root of the hierarchy needs --force" "1 0" sh -c \
	"\"$SG\" attach --cgroup \"$CG_ROOT\" --policy \"$DENY\" >/dev/null 2>&1; echo -n \"\$? \"; bpftool cgroup show \"$CG_ROOT\" | grep -c sysctl"
# One program per node: cgroups share it, whatever their policies, and each
# cgroup keeps its own counters.
new_cgroup SHA
new_cgroup SHB
new_cgroup SHC
attach "$SHA" "$DENY" && attach "$SHB" "$DENY" && attach "$SHC" "$ALLOW" || finish
prog_of() { bpftool cgroup show "$1" | awk '/sysctl/ { print $1 }'; }
expect "two cgroups with one policy share one program" "$(prog_of "$SHA")" prog_of "$SHB"
expect "a cgroup with another policy shares it too" "$(prog_of "$SHA")" prog_of "$SHC"
io "$SHA" --uts write kernel/domainname x >/dev/null
io "$SHA" --uts write kernel/domainname y >/dev/null
denies() { "$SG" status --cgroup "$1" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["counters"]["deny"])'; }
expect "the first cgroup counted its two denials" "2" denies "$SHA"
expect "the second cgroup counted none" "0" denies "$SHB"
expect "and each enforces its own policy" "EPERM ok" sh -c \
	"echo \$(\"$SG_IO\" --cgroup \"$SHB\" --uts write kernel/domainname x; \"$SG_IO\" --cgroup \"$SHC\" --uts write kernel/domainname x)"

# A cgroup's storage outlives its guards (the kernel frees it with the
# cgroup): a guard attached after a detach starts from zero, not from the
# last guard's totals.
"$SG" detach --cgroup "$SHA" >/dev/null
"$SG" attach --cgroup "$SHA" --profile audit >/dev/null
expect "detached and guarded again: the new guard counted no denial" "0" denies "$SHA"
expect "... and enforces its own policy" "ok" io "$SHA" --uts write kernel/domainname x
# The same when its link was detached behind its back (bpftool), not by detach.
new_cgroup BEHIND
# Another suite's gc may remove such a guard before status looks (its link
# no longer enforces, which is gc's to clean up): then again, a few times.
detached_behind_its_back() {
	for _ in 1 2 3; do
		"$SG" attach --cgroup "$BEHIND" --profile read-only >/dev/null
		io "$BEHIND" --uts write kernel/domainname x >/dev/null
		bpftool link detach pinned "/sys/fs/bpf/sysctl-guard/$(stat -c %i "$BEHIND")/link"
		"$SG" status --cgroup "$BEHIND" 2>/dev/null | grep -q 'NOT ENFORCED: its link was detached' &&
			{ echo 1; return; }
	done
	echo 0
}
expect "status says such a guard does not enforce, though its cgroup is there" "1" detached_behind_its_back
"$SG" attach --cgroup "$BEHIND" --profile audit >/dev/null
expect "a guard whose link was detached behind its back, attached again: no old denial" "0" denies "$BEHIND"
"$SG" detach --cgroup "$BEHIND" >/dev/null

# A policy no guard uses any more is freed by gc, and its slot with it.
UNUSED=$(policy unused "{ \"version\": 1, \"rules\": [{ \"name\": \"kernel.sg_lifecycle_$$\", \"access\": \"none\" }] }")
new_cgroup ONCE
attach "$ONCE" "$UNUSED" || finish
KEY=$(policy_of_cgroup "$ONCE")
PROGRAM=$(program_of_cgroup "$ONCE")
slots_held_by_key() { slots "$PROGRAM" | awk -v key="$KEY" '$2 == key' | wc -l; }
expect "the policy holds one slot" "1" slots_held_by_key
"$SG" detach --cgroup "$ONCE" >/dev/null
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "gc freed the unused policy's tables" "no" sh -c "[ -e /sys/fs/bpf/sysctl-guard/policies/$KEY ] && echo yes || echo no"
expect "and its slot" "0" slots_held_by_key
finish
