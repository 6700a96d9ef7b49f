#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `sysctl-guard metrics`: the decisions a container's reads and writes made,
# each guard's state, the memory bpftool reports for policies and programs,
# in a text promtool accepts; --textfile written whole; its errors.
. "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || skip "promtool is not installed (Debian package prometheus)"

QUERY=$(dirname "$0")/prom_query.py
PINS=/sys/fs/bpf/sysctl-guard
export SYSCTL_GUARD_CONFIG=$TMPDIR_TEST/config.json
echo '{ "version": 1 }' >"$SYSCTL_GUARD_CONFIG"

# query FILE NAME [LABEL=VALUE...] [--label LABEL,...]: prom_query.py's usage.
query() { python3 "$QUERY" "$@"; }
# valid FILE: what promtool says of FILE, "valid" when it accepts it.
valid() { promtool check metrics <"$1" 2>&1 && echo valid; }
# verdicts FILE LABEL=VALUE...: the guard's decisions: "allow N deny N rewrite N audit N".
verdicts() {
	local file=$1
	shift
	echo $(query "$file" sysctl_guard_decisions_total "$@" --label verdict,_value | tr -d "'")
}
# as_label PATH: PATH as a label value reads back, in prom_query.py's --label form.
as_label() { python3 -c 'import os, sys; print(ascii(os.fsencode(sys.argv[1]).decode("utf-8", "replace")))' "$1"; }

# The memory bpftool reports for the maps and programs pinned in a directory, each once.
cat >"$TMPDIR_TEST/memlock.py" <<'EOF'
import json, os, subprocess, sys
seen, total = set(), 0
for name in os.listdir(sys.argv[1]):
	pin = os.path.join(sys.argv[1], name)
	for kind in ("map", "prog"):
		out = subprocess.run(["bpftool", "-j", kind, "show", "pinned", pin], capture_output=True, text=True)
		if out.returncode == 0:
			o = json.loads(out.stdout)
			if (kind, o["id"]) not in seen:
				seen.add((kind, o["id"]))
				total += o["bytes_memlock"]
			break
print(total)
EOF

# --- A container's decisions ---
ID=metrics-$$
container "$ID" '{"io.sysctl-guard.policy": "{\"version\": 1, \"rules\": [{\"name\": \"kernel.hostname\", \"access\": \"read-write\"}]}"}'
HOOK=$(hook_created "$ID") || { echo "FAIL: $HOOK"; FAIL=$((FAIL + 1)); finish; }
CGID=$(stat -c %i "$CG")
accesses() {
	for _ in 1 2 3; do io "$CG" --uts write kernel/domainname x; done
	for _ in 1 2; do io "$CG" --uts write kernel/hostname y; done
	io "$CG" read kernel/ostype
}
expect "the container: 3 writes denied, 2 allowed, 1 read" "EPERM EPERM EPERM ok ok ok Linux" \
	eval 'echo $(accesses)'
# The program decides each read() and write(): reading the file took two
# reads, its text and then the end of the file.

M=$TMPDIR_TEST/metrics.prom
# (On stderr: guards it cannot read, as another build's on a shared node.)
expect "metrics: exit 0" "0" sh -c "\"$SG\" metrics >$M 2>$M.err; echo \$?"
expect "promtool check metrics accepts it" "valid" valid "$M"
expect "the container's decisions: allow deny rewrite audit" "allow 4 deny 3 rewrite 0 audit 0" verdicts "$M" container_id="$ID"
POLICY=$(policy_of "$ID")
expect "its series name the cgroup, its id, the policy and its description" \
	"'$CG' '$CGID' '$POLICY' 'annotation inline policy'" \
	query "$M" sysctl_guard_decisions_total container_id="$ID" verdict=deny --label cgroup,cgroup_id,policy,policy_description
status_counters() {
	"$SG" status --container "$ID" --json | python3 -c 'import json, sys
c = json.load(sys.stdin)[0]["counters"]
print(*[f"{k} {c[k]}" for k in ("allow", "deny", "rewrite", "audit")], "dropped", c["events_dropped"])'
}
metrics_counters() {
	echo "$(verdicts "$M" container_id="$ID")" dropped "$(query "$M" sysctl_guard_events_dropped_total container_id="$ID")"
}
expect "status counts the same, events dropped too" "$(status_counters)" metrics_counters
expect "its state: enforced" "1" query "$M" sysctl_guard_guard_state container_id="$ID" state=enforced
expect "the guards by state agree with each guard's state" "agree" query "$M" --states-agree

# --- Memory: the memlock of the policy's maps and of the program's pins ---
expect "the policy's memory: what bpftool reports for its maps" \
	"$(python3 "$TMPDIR_TEST/memlock.py" "$PINS/policies/$POLICY")" \
	query "$M" sysctl_guard_policy_memory_bytes policy="$POLICY"
expect_match "... which is more than nothing" '^[1-9][0-9]*$' query "$M" sysctl_guard_policy_memory_bytes policy="$POLICY"
# The pins lock, held exclusively as gc holds it: no policy or vacancy comes or goes meanwhile.
PROGRAM=$(program_of_cgroup "$CG")
L=$TMPDIR_TEST/locked
flock -x "$PINS" sh -c "\"$SG\" metrics >$L.prom; python3 -S $TMPDIR_TEST/memlock.py $PINS/programs/$PROGRAM >$L.program; ls $PINS/policies | grep -vc '^staging-' >$L.policies"
expect "the program's memory: what bpftool reports for it and its maps" "$(cat "$L.program")" \
	query "$L.prom" sysctl_guard_program_memory_bytes program="$PROGRAM"
expect "the policies on the node: those pinned" "$(cat "$L.policies")" query "$L.prom" sysctl_guard_policies

# --- States, and label values that need escaping ---
# A rewrite rule: rewritten, or denied where this kernel ignores rewrites (degraded).
new_cgroup REWRITE
attach "$REWRITE" "$(policy rewrite '{ "version": 1, "rules": [{ "name": "kernel.domainname", "access": "read-write", "rewrite": "sandbox" }] }')"
io "$REWRITE" --uts write kernel/domainname x >/dev/null
if rewrites_ignored; then REWRITTEN="degraded allow 0 deny 1 rewrite 0 audit 0"; else REWRITTEN="enforced allow 0 deny 0 rewrite 1 audit 0"; fi
# A cgroup whose directory has a quote, a backslash and a byte that is not
# UTF-8, guarded by a policy file whose path has a newline: audit mode.
WEIRD="$CG_ROOT/sg-test.$$.q\"b\\s$(printf '\xff')"
mkdir "$WEIRD" && CGROUPS+=("$WEIRD")
AUDIT="$TMPDIR_TEST/we\"ird
na$(printf '\xff')me.json"
echo '{ "version": 1, "mode": "audit", "default": "read" }' >"$AUDIT"
attach "$WEIRD" "$AUDIT"
io "$WEIRD" --uts write kernel/domainname x >/dev/null
io "$WEIRD" --uts write kernel/domainname y >/dev/null
# One detached behind its back (bpftool), one whose cgroup was removed.
new_cgroup DETACHED
new_cgroup GONE
attach "$DETACHED" "$(policy deny '{ "version": 1 }')"
attach "$GONE" "$(policy deny '{ "version": 1 }')"
GONEID=$(stat -c %i "$GONE")
# Its guard outlives the cgroup until gc takes it, also when the test stops early.
remove_gone() { [ -e "$PINS/$GONEID" ] && "$SG" gc >/dev/null 2>&1; }
trap 'remove_gone; cleanup' EXIT
# gc removes both: under the pins lock, held shared as a hook holds it,
# no other suite's gc does it before metrics looks. The kernel detaches the
# link of a removed cgroup a moment after rmdir.
S=$TMPDIR_TEST/states.prom
exec {lock}<"$PINS"
flock -s "$lock"
bpftool link detach pinned "$PINS/$(stat -c %i "$DETACHED")/link"
rmdir "$GONE"
for _ in $(seq 50); do
	"$SG" metrics >"$S"
	[ "$(query "$S" sysctl_guard_guard_state cgroup_id="$GONEID" --label state)" = "'cgroup_gone'" ] && break
	sleep 0.1
done
flock -u "$lock"
exec {lock}<&-

state_of() { query "$S" sysctl_guard_guard_state cgroup_id="$(stat -c %i "$1")" --label state; }
expect "a guard whose link was detached: not_enforced" "'not_enforced'" state_of "$DETACHED"
expect "a guard whose cgroup was removed: cgroup_gone, its cgroup \"\"" "'cgroup_gone' ''" \
	query "$S" sysctl_guard_guard_state cgroup_id="$GONEID" --label state,cgroup
rewrite_guard() { echo "$(state_of "$REWRITE" | tr -d "'")" "$(verdicts "$S" cgroup="$REWRITE")"; }
expect "a guard with a rewrite rule: its state and decisions" "$REWRITTEN" rewrite_guard
WEIRDID=$(stat -c %i "$WEIRD")
expect "an audit guard counts what enforce would deny" "allow 0 deny 0 rewrite 0 audit 2" verdicts "$S" cgroup_id="$WEIRDID"
expect "a directory with a quote, a backslash and a byte not UTF-8 reads back, U+FFFD for the byte" \
	"$(as_label "$WEIRD")" query "$S" sysctl_guard_guard_state cgroup_id="$WEIRDID" --label cgroup
expect "a description with a newline reads back" "$(as_label "policy $AUDIT")" \
	query "$S" sysctl_guard_guard_state cgroup_id="$WEIRDID" --label policy_description
expect "promtool accepts them" "valid" valid "$S"
expect "the guards by state agree with each guard's state" "agree" query "$S" --states-agree
gc_until_removed() {
	for _ in $(seq 50); do
		"$SG" gc >/dev/null 2>&1
		[ -e "$PINS/$GONEID" ] || { echo removed; return; }
		sleep 0.1
	done
}
expect "gc removes the guard of the removed cgroup" "removed" gc_until_removed

# --- --textfile: written whole, for node_exporter's textfile collector ---
TEXT=$TMPDIR_TEST/textfile
PROM=$TEXT/sysctl_guard.prom
mkdir "$TEXT"
expect "--textfile DIR: exit 0, DIR/sysctl_guard.prom and no temporary file" "0 sysctl_guard.prom" \
	sh -c "\"$SG\" metrics --textfile $TEXT; echo \$? \$(ls -A $TEXT)"
expect "... readable by node_exporter's user" "644" stat -c %a "$PROM"
expect "... which promtool accepts" "valid" valid "$PROM"
expect "... with the container's decisions" "allow 4 deny 3 rewrite 0 audit 0" verdicts "$PROM" container_id="$ID"
INODE=$(stat -c %i "$PROM")
expect "a second run renames a new file over it" "new sysctl_guard.prom" \
	sh -c "\"$SG\" metrics --textfile $TEXT && [ \$(stat -c %i $PROM) != $INODE ] && echo new \$(ls -A $TEXT)"
# A reader sees a whole file at every moment: one that ends with the last
# family's last sample. The reader starts the writer, whose end it waits for.
whole_while_written() {
	python3 - "$PROM" "$SG" "$TEXT" <<'EOF'
import re, subprocess, sys
whole = re.compile(r'\nsysctl_guard_program_memory_bytes\{program="[^"]*"\} [0-9]+\n\Z')
writer = subprocess.Popen(["sh", "-c", 'for i in $(seq 20); do "$0" metrics --textfile "$1" || exit; done', sys.argv[2], sys.argv[3]])
reads = partial = 0
while writer.poll() is None:
	with open(sys.argv[1]) as f:
		partial += not whole.search(f.read())
	reads += 1
print(f"{partial} partial" if writer.returncode == 0 and reads else f"writer {writer.returncode}, {reads} reads")
EOF
}
expect "read while written 20 times: never partial" "0 partial" whole_while_written

expect "--textfile with a directory that is not there: exit 2, said so" "2 1" sh -c \
	"\"$SG\" metrics --textfile $TEXT/none 2>$TMPDIR_TEST/none.err; echo \$? \$(grep -c -- '--textfile $TEXT/none: cannot use it: No such file or directory' $TMPDIR_TEST/none.err)"
expect "--textfile with a file: exit 2" "2" usage_status "$SG" metrics --textfile "$PROM"
expect "--textfile with a read-only directory: exit 2, said so, nothing left there" "2 1 0" \
	unshare -m sh -c "mount -t tmpfs -o ro none $TEXT && echo \$(\"$SG\" metrics --textfile $TEXT 2>$TMPDIR_TEST/ro.err; echo \$?; grep -c 'cannot create a file in it: Read-only file system' $TMPDIR_TEST/ro.err; ls -A $TEXT | wc -l)"
expect "usage errors exit 1: an unknown option, an operand, --textfile without DIR or with \"\"" \
	"1 1 1 1" sh -c "echo \$(for a in --bogus extra --textfile --textfile=; do \"$SG\" metrics \$a >/dev/null 2>&1; echo \$?; done)"
expect "help metrics: its usage" "Usage: sysctl-guard metrics [--textfile DIR [--every SECONDS]]" sh -c "\"$SG\" help metrics | head -1"
# --every: the DaemonSet's container rewrites the file until SIGTERM, then exits 0.
EVERY=$TMPDIR_TEST/every
mkdir "$EVERY"
"$SG" metrics --textfile "$EVERY" --every 1 >"$TMPDIR_TEST/every.out" 2>&1 &
EVERY_PID=$!
SLEEPERS+=("$EVERY_PID")
rewrites() { # the inodes the file had over 3.5 s: a new one each second
	local seen=() i
	for i in $(seq 7); do
		seen+=("$(stat -c %i "$EVERY/sysctl_guard.prom" 2>/dev/null)")
		sleep 0.5
	done
	printf '%s\n' "${seen[@]}" | grep -v '^$' | sort -u | wc -l
}
expect_match "--every 1: a new file every second" "^[2-9]$" rewrites
expect "... which promtool accepts" "" sh -c "promtool check metrics <'$EVERY/sysctl_guard.prom' 2>&1"
kill -TERM "$EVERY_PID"
wait "$EVERY_PID"
EVERY_STATUS=$?
expect "... and SIGTERM ends it with status 0, said so" "0 metrics: stopping on SIGTERM" \
	sh -c "echo $EVERY_STATUS \$(tail -1 '$TMPDIR_TEST/every.out')"
expect "--every without --textfile: exit 1" "1" usage_status "$SG" metrics --every 5

finish
