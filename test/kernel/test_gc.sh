#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# gc takes only what no longer enforces: never a guard whose link still
# enforces, whoever made it (another version of sysctl-guard, whose meta
# this one cannot read, or whose pinned values are larger than ours), nor
# the policies such a guard may use, nor the link a killed hook left
# pinned in its staging directory while its cgroup's guard kept it.
. "$(dirname "$0")/lib.sh"

PINS=/sys/fs/bpf/sysctl-guard
# Policies of this run only: gc must not find them shared with another test's guards.
POLICY=$(policy gc "{ \"version\": 1, \"default\": \"read\", \"rules\": [{ \"name\": \"kernel.sg_gc_$$_$RANDOM\", \"access\": \"none\" }, { \"name\": \"kernel.domainname\", \"access\": \"read\" }] }")
OTHER=$(policy other "{ \"version\": 1, \"default\": \"read\", \"rules\": [{ \"name\": \"kernel.sg_gc_other_$$_$RANDOM\", \"access\": \"none\" }] }")
write_in() { io "$1" --uts write kernel/domainname x; }
pinned() { [ -e "$1" ] && echo yes || echo no; }
# gc_then_write, detach_then_write CGROUP, attach_then_write CGROUP POLICY:
# the command's exit status, then what a write in the cgroup got;
# pinned_and_write CGROUP: whether its guard's link is pinned, then the same
gc_then_write() { "$SG" gc --min-age 0 >/dev/null 2>&1; echo "$? $(write_in "$1")"; }
detach_then_write() { "$SG" detach --cgroup "$1" >/dev/null 2>&1; echo "$? $(write_in "$1")"; }
pinned_and_write() { echo "$(pinned "$PINS/$(stat -c %i "$1")/link") $(write_in "$1")"; }
attach_then_write() { "$SG" attach --cgroup "$1" --policy "$2" >/dev/null 2>&1; echo "$? $(write_in "$1")"; }

# replace_meta ENTRY VALUE_SIZE FORMAT: the guard's meta as another version
# would have pinned it: VALUE_SIZE bytes whose first word is FORMAT.
replace_meta() {
	local meta=$PINS/$1/meta
	rm -f "$meta"
	bpftool map create "$meta" type array key 4 value "$2" entries 1 name meta || return 1
	bpftool map update pinned "$meta" key 0 0 0 0 value $(printf '%d 0 0 0 ' "$3") \
		$(for ((i = 4; i < $2; i++)); do printf '0 '; done) || return 1
}

# 1. A guard whose meta another version wrote (another format, the same size).
new_cgroup OLD
attach "$OLD" "$POLICY" || finish
OLD_ID=$(stat -c %i "$OLD")
OLD_KEY=$(policy_of_cgroup "$OLD")
replace_meta "$OLD_ID" 512 999 || { echo "FAIL: cannot replace the meta"; finish; }
expect "status says the guard is not this version's" "yes" sh -c \
	"\"$SG\" status --cgroup \"$OLD\" 2>&1 | grep -q 'not a guard of this version' && echo yes"
"$SG" gc --min-age 0 >/dev/null 2>"$TMPDIR_TEST/gc.err"
expect "gc keeps another version's guard that still enforces" "yes EPERM" pinned_and_write "$OLD"
expect "and every policy, as it cannot tell which that guard uses" "yes" pinned "$PINS/policies/$OLD_KEY"
expect "and says so" "1" grep -c "kept every policy" "$TMPDIR_TEST/gc.err"

# 2. A meta larger than ours (another build's struct grew): read without overrunning ours.
replace_meta "$OLD_ID" 1024 999 || { echo "FAIL: cannot replace the meta"; finish; }
expect "status of a guard with a larger meta: refused, no crash" "1 yes" sh -c \
	"\"$SG\" status --cgroup \"$OLD\" >/dev/null 2>\"$TMPDIR_TEST/st.err\"; echo -n \"\$? \"; grep -q 'not a guard of this version' \"$TMPDIR_TEST/st.err\" && echo yes"
expect "gc with a larger meta: exit 0, the guard kept" "0 EPERM" gc_then_write "$OLD"
expect "detach removes it all the same" "0 ok" detach_then_write "$OLD"
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "once it is gone, gc frees the policy" "no" pinned "$PINS/policies/$OLD_KEY"

# 3. A hook killed right after replacing a guard of the same program: its
# staging directory pins the link the cgroup's guard kept. gc removes the
# directory and the guard still enforces.
new_cgroup KEPT
attach "$KEPT" "$POLICY" || finish
attach "$KEPT" "$OTHER" || finish
KEPT_ID=$(stat -c %i "$KEPT")
sh -c 'exit 0' &
dead=$!
wait "$dead"
ORPHAN=$PINS/staging-$dead-$KEPT_ID
mkdir "$ORPHAN"
bpftool link pin pinned "$PINS/$KEPT_ID/link" "$ORPHAN/link" || echo "FAIL: cannot pin the link"
"$SG" gc >/dev/null 2>&1
expect "gc removes the killed hook's staging directory" "no" pinned "$ORPHAN"
expect "and the guard whose link it pinned still enforces" "EPERM" write_in "$KEPT"
expect "its link still attached" "1" sh -c "bpftool cgroup show \"$KEPT\" | grep -c sysctl"

# 4. An attach killed after the cgroup's storage named its new policy and
# before the new meta did: gc keeps the policy the cgroup enforces, though no
# meta names it, and the cgroup goes on deciding by it.
READS=$(policy reads "{ \"version\": 1, \"default\": \"read\", \"rules\": [{ \"name\": \"kernel.sg_gc_reads_$$_$RANDOM\", \"access\": \"none\" }] }")
new_cgroup AHEAD
new_cgroup HOLDER
attach "$AHEAD" "$POLICY" || finish
attach "$HOLDER" "$READS" || finish
READS_KEY=$(policy_of_cgroup "$HOLDER")
AHEAD_KEY=$(policy_of_cgroup "$AHEAD")
SYSCTL_GUARD_FAULT=kill_after_storage "$SG" attach --cgroup "$AHEAD" --policy "$READS" >/dev/null 2>&1
expect "the killed attach left the meta naming the old policy" "$AHEAD_KEY" policy_of_cgroup "$AHEAD"
"$SG" detach --cgroup "$HOLDER" >/dev/null
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "gc keeps the policy the cgroup's storage names" "yes" pinned "$PINS/policies/$READS_KEY"
expect "and the cgroup still reads by it" "ok $(cat /proc/sys/kernel/ostype)" io "$AHEAD" read kernel/ostype

# 5. A link detached behind the guard's back (its storage went with it) is
# not reused: the next attach to that cgroup makes a new one, and enforces.
new_cgroup LOST
attach "$LOST" "$POLICY" || finish
bpftool link detach pinned "$PINS/$(stat -c %i "$LOST")/link" || echo "FAIL: cannot detach the link"
expect "a detached link: the cgroup is unguarded" "ok" write_in "$LOST"
expect "attach again: exit 0, and it enforces" "0 EPERM" attach_then_write "$LOST" "$POLICY"

# 6. Two attaches to one cgroup at once, again and again: each time, the
# policy its guard names (status) is the one the cgroup enforces.
OPEN=$(policy open "{ \"version\": 1, \"default\": \"read\", \"rules\": [{ \"name\": \"kernel.domainname\", \"access\": \"read-write\" }] }")
new_cgroup RACE
attach "$RACE" "$OPEN" || finish
OPEN_KEY=$(policy_of_cgroup "$RACE")
attach "$RACE" "$POLICY" || finish
CLOSED_KEY=$(policy_of_cgroup "$RACE")
PAIRS=20
outside_matrix "20 pairs of attaches at once" || PAIRS=5
disagreements() {
	local n=0 key got
	for i in $(seq $PAIRS); do
		"$SG" attach --cgroup "$RACE" --policy "$OPEN" >/dev/null 2>&1 &
		"$SG" attach --cgroup "$RACE" --policy "$POLICY" >/dev/null 2>&1 &
		wait
		key=$(policy_of_cgroup "$RACE")
		got=$(write_in "$RACE")
		{ [ "$key" = "$OPEN_KEY" ] && [ "$got" = ok ]; } ||
			{ [ "$key" = "$CLOSED_KEY" ] && [ "$got" = EPERM ]; } || n=$((n + 1))
	done
	echo "$n"
}
expect "$PAIRS pairs of attaches at once: status and the cgroup agree every time" "0" disagreements

# 7. Vacancies (hook/kernel/vacancy.h): gc leaves the map of tables of a
# policy it frees in its slot, and a new policy that fits takes it over,
# with its own rules only: none of the old one's, long names included.
LONG_NAME=net.ipv4.conf.all.igmpv3_unsolicited_report_interval
# many_rules TAG ACCESS [EXTRA_RULE]: 300 rules of names of this run, then
# kernel.domainname with ACCESS: a size no other policy of the run has.
many_rules() {
	python3 -c 'import json, sys
rules = [{"name": "kernel.sg_vacancy_%s_%d" % (sys.argv[1], k), "access": "none"} for k in range(300)]
rules.append({"name": "kernel.domainname", "access": sys.argv[2]})
rules += [{"name": n, "access": "none"} for n in sys.argv[3:]]
print(json.dumps({"version": 1, "default": "read-write", "rules": rules}))' "$@"
}
VACATED=$(policy vacated "$(many_rules "a$$" none "$LONG_NAME")")
TAKER=$(policy taker "$(many_rules "b$$" read-write)")
new_cgroup KEEP # its guard keeps the program, and with it the vacancies
new_cgroup VAC
attach "$KEEP" "$OPEN" && attach "$VAC" "$VACATED" || finish
PROGRAM=$(program_of_cgroup "$VAC")
# Vacancies of earlier tests would leave no room for one more: unpinned, gc frees their slots.
rm -f "$PINS/programs/$PROGRAM"/vacant-*
"$SG" gc --min-age 0 >/dev/null 2>&1
# holder_of SLOT, slot_of HOLDER: the slots map, both ways.
holder_of() { slots "$PROGRAM" | awk -v slot="$1" '$1 == slot { print $2 }'; }
slot_of() { slots "$PROGRAM" | awk -v holder="$1" '$2 == holder { print $1 }'; }
# What writes of kernel.domainname and of the long name in VAC get.
vac_writes() { echo "$(io "$VAC" --uts write kernel/domainname x) $(io "$VAC" --net write "$(echo "$LONG_NAME" | tr . /)" 1000)"; }
expect "the policy to vacate denies kernel.domainname and its long name" "EPERM EPERM" vac_writes
VACATED_KEY=$(policy_of_cgroup "$VAC")
SLOT=$(slot_of "$VACATED_KEY")
"$SG" detach --cgroup "$VAC" >/dev/null
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "gc freed the policy" "no" pinned "$PINS/policies/$VACATED_KEY"
vacancies() { ls "$PINS/programs/$PROGRAM" | grep -c "^vacant-${1:-}"; }
vacancy_at_slot() { echo "$(vacancies "$SLOT-") $(holder_of "$SLOT")"; }
expect "... and left its map in its slot, a vacancy" "1 vacant" vacancy_at_slot
attach "$VAC" "$TAKER" || finish
TAKER_KEY=$(policy_of_cgroup "$VAC")
taker_slot() { echo "$(slot_of "$TAKER_KEY") $(vacancies)"; }
expect "a new policy of its size takes the vacancy" "$SLOT 0" taker_slot
expect "... and enforces its rules, none of the old policy's" "ok ok" vac_writes
"$SG" detach --cgroup "$VAC" >/dev/null
"$SG" detach --cgroup "$KEEP" >/dev/null
finish
