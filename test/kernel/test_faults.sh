#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every kernel step failing in turn, and hooks killed at any moment: the
# result is a complete guard or nothing (after gc), never half a guard.
. "$(dirname "$0")/lib.sh"

# Policies of this run only: a program pinned by another test would be
# shared, and the load steps would not run at all.
UNIQUE="{ \"name\": \"kernel.sg_faults_$$_$RANDOM\", \"access\": \"none\" }"
DENY=$(policy deny "{ \"version\": 1, \"default\": \"read\", \"rules\": [$UNIQUE] }")
ALLOW=$(policy allow "{ \"version\": 1, \"default\": \"read-write\", \"rules\": [$UNIQUE] }")
programs_on() { bpftool cgroup show "$1" 2>/dev/null | grep -c sysctl; }
# Staging directories of this test's cgroup (other tests' hooks may be mid-attach).
staging_left() { ls /sys/fs/bpf/sysctl-guard 2>/dev/null | grep -c "^staging-[0-9]*-$CGID\$"; }

new_cgroup CG
CGID=$(stat -c %i "$CG")
for step in bpffs map_create prog_load map_update attach pin rename; do
	expect "$step fails: exit status 2 and the step named" "2 yes" sh -c \
		"out=\$(SYSCTL_GUARD_FAULT=$step \"$SG\" attach --cgroup \"$CG\" --policy \"$DENY\" 2>&1); echo \$? \$(echo \"\$out\" | grep -qiE 'injected|input/output|I/O error|the kernel refused the BPF program' && echo yes)"
	expect "$step fails: nothing attached" "0" programs_on "$CG"
	expect "$step fails: nothing pinned" "no" sh -c "[ -e /sys/fs/bpf/sysctl-guard/$CGID ] && echo yes || echo no"
	expect "$step fails: no staging left" "0" staging_left
	expect "$step fails: the cgroup is unguarded" "ok" io "$CG" --uts write kernel/domainname x
done

# A large policy: any of its maps failing leaves nothing attached and
# nothing staged, and the same policy attaches afterwards. (Descriptors and memory: the valgrind part below.)
# With a long name it has every map (fill_exact_long below: a policy
# without long names makes no such map).
BIG_RULES=$(for i in $(seq 3000); do printf '{ "name": "net.ipv4.conf.sgf%d.rp_filter", "access": "none" },' "$i"; done)
BIG_RULES+='{ "name": "net.ipv4.conf.sg-an-interface-name-of-many-letters.rp_filter", "access": "none" },
{ "name": "kernel.sg_faults_values", "access": "read-write", "values": ["a", "b"] },
{ "name": "kernel.sg_faults_rewrite", "access": "read-write", "rewrite": "x" },'

big_policy() { policy "$1" "{ \"version\": 1, \"default\": \"read\", \"rules\": [$BIG_RULES $2] }"; }
BIG=$(big_policy big "$UNIQUE")
# Staging directories of policies whose hook is gone (those of live hooks of other tests stay).
policy_staging_left() {
	local n=0 d pid
	for d in /sys/fs/bpf/sysctl-guard/policies/staging-*; do
		[ -e "$d" ] || continue
		pid=${d##*/staging-}
		kill -0 "${pid%%-*}" 2>/dev/null || n=$((n + 1))
	done
	echo "$n"
}
staging_both() { echo "$(staging_left) $(policy_staging_left)"; }
FILL_STEPS="fill_tables fill_rule_names fill_exact_long"
if outside_matrix "each of a large policy's tables failing"; then
	for step in $FILL_STEPS; do
		expect "$step fails in a large policy: exit status 2, an I/O error reported" "2 yes" sh -c \
			"out=\$(SYSCTL_GUARD_FAULT=$step \"$SG\" attach --cgroup \"$CG\" --policy \"$BIG\" 2>&1); echo \$? \$(echo \"\$out\" | grep -qiE 'injected|input/output|I/O error' && echo yes)"
		expect "$step fails in a large policy: nothing attached" "0" programs_on "$CG"
		expect "$step fails in a large policy: no staging left (guard, policy)" "0 0" staging_both
	done
	expect "a hash table that cannot be laid out: exit status 2, said so" "2 yes" sh -c \
		"out=\$(SYSCTL_GUARD_FAULT=plan \"$SG\" attach --cgroup \"$CG\" --policy \"$BIG\" 2>&1); echo \$? \$(echo \"\$out\" | grep -q 'cannot lay out the hash tables' && echo yes)"
	expect "a hash table that cannot be laid out: nothing attached" "0" programs_on "$CG"
	expect "a hash table that cannot be laid out: no staging left (guard, policy)" "0 0" staging_both
	expect "the large policy attaches after its failures and denies" "EPERM" sh -c \
		"\"$SG\" attach --cgroup \"$CG\" --policy \"$BIG\" >/dev/null 2>&1 && \"$SG_IO\" --cgroup \"$CG\" --uts write kernel/domainname x"
	"$SG" detach --cgroup "$CG" >/dev/null
fi

# A policy of many patterns: its tables failing to fill fails the attach with
# nothing left behind; the DFA decides in the kernel.
PATTERN_RULES=$(for i in $(seq 300); do printf '{ "name": "net.ipv6.conf.sgp%d*.mtu", "access": "none" },' "$i"; done)
PATTERNS=$(policy patterns "{ \"version\": 1, \"default\": \"read-write\", \"rules\": [$PATTERN_RULES { \"name\": \"kernel.domainnam?\", \"access\": \"read\" }, $UNIQUE] }")
expect "fill_tables fails in a policy of many patterns: exit status 2, said so" "2 yes" sh -c \
	"out=\$(SYSCTL_GUARD_FAULT=fill_tables \"$SG\" attach --cgroup \"$CG\" --policy \"$PATTERNS\" 2>&1); echo \$? \$(echo \"\$out\" | grep -qiE 'injected|input/output|I/O error' && echo yes)"
expect "fill_tables fails in a policy of many patterns: nothing attached" "0" programs_on "$CG"
expect "fill_tables fails in a policy of many patterns: no staging left (guard, policy)" "0 0" staging_both
# Too complex (more than SG_MAX_DFA_STATES): exit 1, as sg_compile says.
COMPLEX=$(policy complex "{ \"version\": 1, \"rules\": [$PATTERN_RULES { \"name\": \"**.a$(printf '.*%.0s' $(seq 19))\", \"access\": \"none\" }] }")
too_complex() { "$SG" attach --cgroup "$CG" --policy "$COMPLEX" 2>&1 >/dev/null; echo "exit $?"; }
expect "a DFA too complex: exit 1 and why" "sysctl-guard: $COMPLEX: policy too complex: the patterns need more than 262144 DFA states; use fewer '*'/'**' patterns
exit 1" too_complex
expect "... nothing attached" "0" programs_on "$CG"
expect "... and first, whatever fails after the compile (a cgroup that is not there)" "1
1" bash -c \
	"\"$SG\" attach --cgroup \"$CG/none\" --policy \"$COMPLEX\" 2>&1 | grep -c 'policy too complex'; echo \${PIPESTATUS[0]}"
expect "a DFA of many patterns decides in the kernel: its pattern denies, the default allows" "EPERM ok" sh -c \
	"\"$SG\" attach --cgroup \"$CG\" --policy \"$PATTERNS\" >/dev/null && echo \$(\"$SG_IO\" --cgroup \"$CG\" --uts write kernel/domainname x) \$(\"$SG_IO\" --cgroup \"$CG\" --uts write kernel/hostname x)"
"$SG" detach --cgroup "$CG" >/dev/null
expect "and no staging left (guard, policy)" "0 0" staging_both

# After the failures above, every outer-map entry is at a claimed slot (a
# slot is claimed before it is placed, emptied before it is freed).
expect "after the failures: no outer-map entry at a free slot" "0" outer_at_free_slots

# A failed replacement keeps the guard that was there.
attach "$CG" "$DENY" || finish
for step in prog_load map_update pin rename; do
	SYSCTL_GUARD_FAULT=$step "$SG" attach --cgroup "$CG" --policy "$ALLOW" >/dev/null 2>&1
	expect "replacement fails at $step: the old guard still denies" "EPERM" io "$CG" --uts write kernel/domainname x
	expect "replacement fails at $step: one program" "1" programs_on "$CG"
done
"$SG" detach --cgroup "$CG" >/dev/null

# SIGKILL at any moment of an attach.
for delay in 0 0.002 0.005 0.01 0.02 0.03 0.05 0.08 0.12; do
	"$SG" attach --cgroup "$CG" --policy "$DENY" >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	"$SG" gc >/dev/null 2>&1
	n=$(programs_on "$CG")
	if [ "$n" = 1 ]; then
		expect "killed after $delay s: a complete guard, pinned, that denies" "yes EPERM" sh -c \
			"[ -e /sys/fs/bpf/sysctl-guard/$CGID/link ] && echo -n 'yes '; \"$SG_IO\" --cgroup \"$CG\" --uts write kernel/domainname x"
	else
		expect "killed after $delay s: nothing attached, nothing pinned" "0 no" sh -c \
			"echo -n '$n '; [ -e /sys/fs/bpf/sysctl-guard/$CGID ] && echo yes || echo no"
	fi
	expect "killed after $delay s: gc left no staging directory" "0" staging_left
	"$SG" detach --cgroup "$CG" >/dev/null 2>&1
done
# What a hook killed before its rename leaves, gc removes: a guard's, a
# policy's and a program's staging directory, each with a map pinned in it.
# One whose hook still runs (this shell, here) stays.
sh -c 'exit 0' &
dead=$!
wait "$dead"
ROOTS="/sys/fs/bpf/sysctl-guard /sys/fs/bpf/sysctl-guard/policies /sys/fs/bpf/sysctl-guard/programs"
for root in $ROOTS; do
	mkdir "$root/staging-$dead-sgtest" "$root/staging-$$-sgtest"
	bpftool map create "$root/staging-$dead-sgtest/m" type array key 4 value 4 entries 1 name sgtest
done
"$SG" gc >/dev/null 2>&1
staging_of() { for root in $ROOTS; do [ -e "$root/staging-$1-sgtest" ] && echo "$root"; done | wc -l; }
expect "gc removes the staging directories of killed hooks" "0" staging_of "$dead"
expect "gc keeps those of hooks still running" "3" staging_of "$$"
for root in $ROOTS; do rmdir "$root/staging-$$-sgtest" "$root/staging-$dead-sgtest" 2>/dev/null; done

# The probe cache's line may hold fields another binary wrote (older ones
# recorded how slow outer-map updates were): they are ignored, and the facts
# cached beside them are used, not probed again (which would write the line
# anew). The facts stay as they are: the hooks of other suites read the same.
PROBE=/run/sysctl-guard/probe
line=$(head -1 "$PROBE" 2>/dev/null)
if [[ $line == *" rewrite="[01]*" sysctl_hook="[01]*" task_helpers="[01]* ]]; then
	facts=$line
	line="$facts slow_outer_updates=1 slow_outer_at=5 slow_outer_hold=60 sg_test_field=x"
	echo "$line" >"$PROBE.sg-test" && mv "$PROBE.sg-test" "$PROBE"
	OLD_FIELDS=$(policy old_fields "{ \"version\": 1, \"rules\": [{ \"name\": \"kernel.sg_old_fields_$$\", \"access\": \"none\" }, { \"name\": \"kernel.domainname\", \"access\": \"none\" }] }")
	expect "a probe cache with fields of another binary: a new policy attaches and denies" "EPERM" sh -c \
		"\"$SG\" attach --cgroup \"$CG\" --policy \"$OLD_FIELDS\" >/dev/null 2>&1 && \"$SG_IO\" --cgroup \"$CG\" --uts write kernel/domainname x"
	"$SG" detach --cgroup "$CG" >/dev/null
	expect "... its cached facts used, the line not written again" "$line" head -1 "$PROBE"
	echo "$facts" >"$PROBE.sg-test" && mv "$PROBE.sg-test" "$PROBE"
else
	echo "note: the probe cache has not every fact yet: its foreign fields not tried"
fi

if outside_matrix "descriptor leaks and memcheck"; then
	# No descriptor leaks, failing or not: valgrind lists what is open at exit.
	# A static binary hides its allocations from memcheck: its dynamic twin runs.
	VG_SG=${SG_DYNAMIC:-$SG}
	if can_valgrind "$VG_SG"; then
		SUPP=$(dirname "$0")/../valgrind.supp
		leaked_fds() { # STEP [POLICY]
			SYSCTL_GUARD_FAULT=$1 valgrind --track-fds=yes -q "$VG_SG" attach --cgroup "$CG" \
				--policy "${2:-$DENY}" >"$TMPDIR_TEST/vg.out" 2>&1
			echo "exit $?" >"$TMPDIR_TEST/vg.status"
			echo $(($(grep -c 'Open file descriptor' "$TMPDIR_TEST/vg.out") - $(grep -c 'inherited from parent' "$TMPDIR_TEST/vg.out")))
		}
		for step in map_update attach pin rename; do
			expect "no descriptor leaks when $step fails" "0" leaked_fds "$step"
		done
		# A policy not made yet: maps are made before the step fails.
		BIG_FDS=$(big_policy big_fds "{ \"name\": \"kernel.sg_fds_$$\", \"access\": \"none\" }")
		failed_without_leaks() { # STEP POLICY: the exit status, then the leaked descriptors
			local leaks
			leaks=$(leaked_fds "$1" "$2")
			echo "$(sed -n 's/^exit //p' "$TMPDIR_TEST/vg.status") $leaks"
		}
		for step in map_update $FILL_STEPS; do
			expect "$step fails in a new large policy: exit 2, no descriptor leaks" "2 0" \
				failed_without_leaks "$step" "$BIG_FDS"
		done
		expect "no descriptor leaks on success" "0" leaked_fds none
		memcheck() {
			SYSCTL_GUARD_FAULT=$1 valgrind --suppressions="$SUPP" --error-exitcode=9 --leak-check=full \
				--errors-for-leak-kinds=definite -q "$VG_SG" attach --cgroup "$CG" --policy "$2" >/dev/null 2>&1
			echo $?
		}
		expect "memcheck: an attach is clean" "0" memcheck none "$ALLOW"
		FRESH=$(policy fresh "{ \"version\": 1, \"rules\": [{ \"name\": \"kernel.sg_memcheck_$$\", \"access\": \"none\" }] }")
		expect "memcheck: a failed attach is clean (exit 2, no memory errors)" "2" memcheck map_update "$FRESH"
		BIG_FRESH=$(big_policy big_fresh "{ \"name\": \"kernel.sg_memcheck_big_$$\", \"access\": \"none\" }")
		expect "memcheck: a large policy failing to fill a map is clean (exit 2)" "2" memcheck fill_tables "$BIG_FRESH"
		PAT_FRESH=$(policy pat_fresh "{ \"version\": 1, \"rules\": [$PATTERN_RULES { \"name\": \"kernel.sg_memcheck_pat_$$\", \"access\": \"none\" }] }")
		# failing first: made once, the policy is found by its key
		for step in fill_tables none; do
			expect "a policy of many patterns, $step: no descriptor leaks" "0" leaked_fds "$step" "$PAT_FRESH"
		done
		"$SG" detach --cgroup "$CG" >/dev/null 2>&1
		expect "memcheck: a policy of many patterns is clean" "0" memcheck none "$PAT_FRESH"
		"$SG" detach --cgroup "$CG" >/dev/null 2>&1
	fi
fi
finish
