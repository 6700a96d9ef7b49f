#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `preload` makes a profile's policy before any container asks for it: the
# first container that names the profile finds it by its inputs, parses
# nothing, and gets what the profile says. gc keeps preloaded policies no
# guard uses; a later preload replaces the set; bad input changes nothing.
. "$(dirname "$0")/lib.sh"

POLICIES=/sys/fs/bpf/sysctl-guard/policies
use_own_node
# Marks are node-wide: the steps that touch marks other than this run's
# (a built-in profile, gc --preloaded, a preload of everything) are tried
# only on a node that has none of its own.
CLEAN_NODE=$(ls "$POLICIES"/*/preloaded:* >/dev/null 2>&1 && echo no || echo yes)

# Only this run's profiles are preloaded here: their marks go on exit, and
# gc frees their policies once they are old enough.
unmark_ours() {
	rm -f "$POLICIES"/*/preloaded:*preload*-$$ "$POLICIES"/*/preloaded:*preload*-$$:*
	[ "$CLEAN_NODE" = yes ] && rm -f "$POLICIES"/*/preloaded:profile:k8s-safe
}
trap 'unmark_ours; "$SG" gc >/dev/null 2>&1; cleanup' EXIT

# Names unique to this run: no policy on the node was made from these inputs.
BIG=preload-big-$$
SMALL=preload-small-$$
BASE=preload-base-$$
NEW=preload-new-$$
ONE=preload-one-$$
DOTTED=preload.dotted-$$
RULES=$(for i in $(seq 3000); do printf '{"name": "net.ipv4.conf.sgp%d.rp_filter", "access": "none"}, ' "$i"; done)
printf '{"version": 1, "default": "read-write", "rules": [%s{"name": "kernel.domainname", "access": "read"}, {"name": "kernel.sg_preload_%s", "access": "none"}]}\n' \
	"$RULES" "$$" >"$PROFILES/$BIG.json"
# small_profile NAME: kernel.hostname read-only, and a rule of its own
small_profile() {
	printf '{"version": 1, "default": "read-write", "rules": [{"name": "kernel.hostname", "access": "read"}, {"name": "kernel.sg_%s", "access": "none"}]}\n' \
		"$(echo "$1" | tr -c 'a-z0-9\n' _)" >"$PROFILES/$1.json"
}
small_profile "$SMALL"
small_profile "$NEW"
small_profile "$DOTTED"
# One rule, which rewrites what is written to kernel.domainname.
printf '{"version": 1, "default": "read-write", "rules": [{"name": "kernel.domainname", "access": "read-write", "rewrite": "preloaded-%s"}]}\n' \
	"$$" >"$PROFILES/$ONE.json"

# key_of LABEL OUTPUT: the policy key preload printed for LABEL.
key_of() { sed -n "s/^preloaded $1: policy \([^ ]*\) .*/\1/p" <<<"$2"; }
stop() { state "$1" stopped 0 | "$SG" hook poststop 2>/dev/null; }
present() { [ -e "$POLICIES/$1" ] && echo present || echo gone; }
marked() { ls "$POLICIES/$1" | grep -q '^preloaded:' && echo marked || echo unmarked; }
# first_word COMMAND...: the first word COMMAND prints
first_word() { "$@" | cut -d' ' -f1; }

# `profiles` says of each installed profile what a container would get:
# its rules, or that a built-in one of its name wins, or why it is invalid.
echo '{"version": 1, "rules": []}' >"$PROFILES/read-only.json"
echo '{"version": 1, "rules": [' >"$PROFILES/broken-$$.json"
expect "profiles: an installed profile's rules and default" " $SMALL 2 rules, default read-write" \
	sh -c "\"$SG\" profiles | grep -F '  $SMALL ' | tr -s ' '"
expect "... one a built-in profile shadows" " read-only shadowed: the built-in profile read-only is used" \
	sh -c "\"$SG\" profiles | sed -n '/^Installed/,\$p' | grep -F '  read-only ' | tr -s ' '"
expect "... and one that does not parse, with where" "1" \
	sh -c "\"$SG\" profiles | grep -c '  broken-$$ *invalid: $PROFILES/broken-$$.json:'"
python3 -c 'import json; print(json.dumps({"version": 1, "rules": [{"name": "**.x" + ".*" * 20, "access": "none"}]}))' \
	>"$PROFILES/complex-$$.json"
echo '{"version": 1, "rules": []}' >"$PROFILES/Upper-$$.json"
expect "... one too complex for the hook to compile" "1" \
	sh -c "\"$SG\" profiles | grep -c '  complex-$$ *invalid: .*policy too complex'"
expect "... and a file no annotation can name" "1" \
	sh -c "\"$SG\" profiles | grep -c '  Upper-$$ *not a profile name'"
rm "$PROFILES/read-only.json" "$PROFILES/broken-$$.json" "$PROFILES/complex-$$.json" "$PROFILES/Upper-$$.json"

OUT=$("$SG" preload "$BIG" "$SMALL" 2>&1)
expect "preload of two profiles succeeds" "0" sh -c "\"$SG\" preload $BIG $SMALL >/dev/null 2>&1; echo \$?"
expect "it names the rules of each" "3002 2" sh -c "sed -n 's/.*(\([0-9]*\) rules)$/\1/p' <<'EOF' | tr '\n' ' ' | sed 's/ $//'
$OUT
EOF"
KEY_BIG=$(key_of "profile $BIG" "$OUT")
KEY_SMALL=$(key_of "profile $SMALL" "$OUT")
expect "the large policy is pinned and marked" "present marked" sh -c "echo $(present "$KEY_BIG") $(marked "$KEY_BIG")"

container p1 "{\"io.sysctl-guard.profile\": \"$BIG\"}"
expect "the first container of the large profile finds it preloaded, and it is enforced" \
	"reused EPERM ok" guarded p1
expect "... with the preloaded tables" "$KEY_BIG" policy_of p1
container p2 "{\"io.sysctl-guard.profile\": \"$SMALL\"}"
expect "so does the small profile's" "reused ok EPERM" guarded p2
container p3 "{\"io.sysctl-guard.profile\": \"$SMALL\", \"io.sysctl-guard.mode\": \"audit\"}"
expect "other inputs (a mode annotation) are not what was preloaded: made" "made ok ok" guarded p3

# --sysctl: made for containers with exactly those linux.sysctl pairs, as
# Podman and containerd add to every config.json, in any order.
SYS=preload-sys-$$
small_profile "$SYS"
OUT=$("$SG" preload --sysctl net.ipv4.ping_group_range="0 0" --sysctl kernel.domainname=preset "$SYS" 2>&1)
expect "preload --sysctl: the label names the pairs" \
	"profile $SYS (linux.sysctl kernel.domainname=preset net.ipv4.ping_group_range=0 0)" \
	sh -c "sed -n 's/^preloaded \(.*\): policy.*/\1/p' <<'EOF'
$OUT
EOF"
container p9 "{\"io.sysctl-guard.profile\": \"$SYS\"}" "" '{"kernel.domainname": "preset", "net.ipv4.ping_group_range": "0 0"}'
expect "... a container with those pairs, in another order, finds it" "reused ok EPERM" guarded p9
container p10 "{\"io.sysctl-guard.profile\": \"$SYS\"}" "" '{"net.ipv4.ping_group_range": "0 0"}'
expect "... one with other pairs makes its own" "made ok EPERM" guarded p10
expect "preload --sysctl without a value: exit 1" "1" usage_status "$SG" preload --sysctl kernel.domainname "$SYS"
expect "... a name given twice: exit 1" "1" usage_status "$SG" preload --sysctl a.b=1 --sysctl a.b=2 "$SYS"
for id in p9 p10; do stop "$id"; done
# Each set of pairs keeps its marks: a preload of everything with other
# pairs (or none) takes off only marks of its own pairs.
KEY_SYS=$(key_of "profile $SYS (linux.sysctl kernel.domainname=preset net.ipv4.ping_group_range=0 0)" "$OUT")
KEY_PLAIN=$(key_of "profile $SYS" "$("$SG" preload "$SYS" 2>&1)")
"$SG" preload --sysctl kernel.domainname="other-$$" >/dev/null 2>&1
expect "a preload of everything with other pairs keeps the marks made with none, and with others" \
	"marked marked" sh -c "echo $(marked "$KEY_PLAIN") $(marked "$KEY_SYS")"
rm "$PROFILES/$SYS.json" # not one of the installed profiles below

# A rewrite: the preloaded policy was fitted to the kernel (rewrites work) as the hook's would be.
OUT=$("$SG" preload "$ONE" 2>&1)
expect "one rule: said in the singular" "1" sh -c "grep -c '(1 rule)$' <<'EOF'
$OUT
EOF"
container p6 "{\"io.sysctl-guard.profile\": \"$ONE\"}"
expect "a rewrite rule, preloaded: found by its inputs" "reused" first_word guarded p6
if grep -q 'rewrite=0' /run/sysctl-guard/probe 2>/dev/null; then
	echo "note: this kernel ignores rewrites: the rewritten value is not checked"
else
	expect "... and the value read back is the rule's" "ok
ok preloaded-$$" io "$CG" --uts write kernel/domainname evil.example read kernel/domainname
fi
# A profile name with a dot (the mark's pin name cannot have one) and a built-in profile.
OUT=$("$SG" preload "$DOTTED" 2>&1)
KEY_DOTTED=$(key_of "profile $DOTTED" "$OUT")
expect "a dotted profile name is preloaded and marked" "marked" marked "$KEY_DOTTED"
container p7 "{\"io.sysctl-guard.profile\": \"$DOTTED\"}"
expect "... and its first container finds it" "reused ok EPERM" guarded p7
if [ "$CLEAN_NODE" = yes ]; then
	KEY_K8S=$(key_of "profile k8s-safe" "$("$SG" preload k8s-safe 2>&1)")
	container p8 '{"io.sysctl-guard.profile": "k8s-safe"}'
	expect "a built-in profile preloaded: its first container finds it" "reused" first_word guarded p8
	expect "... by the key preload printed" "$KEY_K8S" policy_of p8
else
	echo "note: the node has preloaded policies of its own: a built-in profile not tried"
fi

# preload confines itself before it parses a profile (the suites run strict, where a call kills).
confined_preload() {
	SYSCTL_GUARD_CONFINE= SYSCTL_GUARD_CONFINE_SELFTEST=1 "$SG" preload "$SMALL" 2>&1 >/dev/null |
		sed -n 's/^sysctl-guard: warning: //p'
}
expect "preload parses confined: it cannot execve" "confined: execve refused: Operation not permitted" \
	confined_preload
# Compiled confined, many values are sorted by libc's qsort (glibc's asks
# sysinfo first): under the suites' strict filter a call missing kills.
VALUES=preload-values-$$
python3 -c 'import json,sys
rules = [{"name": "net.ipv4.conf.sgv%d.rp_filter" % i, "access": "read-write", "values": ["0", "1", "2"]} for i in range(100)]
print(json.dumps({"version": 1, "rules": rules}))' >"$PROFILES/$VALUES.json"
expect "a profile of many values preloads confined" "0" sh -c "\"$SG\" preload $VALUES >/dev/null 2>&1; echo \$?"
rm -f "$PROFILES/$VALUES.json" # not one of the installed profiles below

stop p1
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "gc keeps a preloaded policy no guard uses" "present" present "$KEY_BIG"

# Bad input fails before anything is loaded, and keeps the set as it was.
echo '{"version": 1, "rules": [{"name": "kernel.hostname", "access": "sometimes"}]}' >"$PROFILES/bad-$$.json"
expect "an invalid profile: exit 1" "1" sh -c "\"$SG\" preload $SMALL bad-$$ >/dev/null 2>&1; echo \$?"
expect "... naming the file and the problem" "1" sh -c "\"$SG\" preload $SMALL bad-$$ 2>&1 | grep -c 'bad-$$.json.*sometimes'"
expect "a profile that does not exist: exit 1" "1" sh -c "\"$SG\" preload missing-$$ >/dev/null 2>&1; echo \$?"
expect "... and the preloaded set is unchanged" "marked marked" sh -c "echo $(marked "$KEY_BIG") $(marked "$KEY_SMALL")"
expect "a new profile named before an invalid one: exit 1" "1" \
	sh -c "\"$SG\" preload $NEW bad-$$ >/dev/null 2>&1; echo \$?"
container p9 "{\"io.sysctl-guard.profile\": \"$NEW\"}"
expect "... and it was not loaded: its first container makes its policy" "made ok EPERM" guarded p9
rm "$PROFILES/bad-$$.json"
EMPTY=$TMPDIR_TEST/empty.json
echo "{ \"version\": 1, \"profiles_dir\": \"$TMPDIR_TEST/none\" }" >"$EMPTY"
expect "nothing to preload: exit 0, saying so" "0 1" sh -c "\"$SG\" preload --config $EMPTY 2>$TMPDIR_TEST/e; echo \$? \$(grep -c 'nothing to preload' $TMPDIR_TEST/e)"
NOTDIR=$TMPDIR_TEST/notdir.json
echo "{ \"version\": 1, \"profiles_dir\": \"$PROFILES/$SMALL.json\" }" >"$NOTDIR"
expect "a profiles_dir that is a file: exit 1, saying so" "1 1" sh -c "\"$SG\" preload --config $NOTDIR 2>$TMPDIR_TEST/e; echo \$? \$(grep -c 'not a directory' $TMPDIR_TEST/e)"

# Where the node's record of inputs is full (here the fault seam), preload
# still makes and marks the policy, but says that its containers will not
# find it by their inputs, and exits 2.
FULL=preload-full-$$
small_profile "$FULL"
full_preload() { # exit status, whether it said why, whether the policy is marked
	SYSCTL_GUARD_FAULT=inputs "$SG" preload "$FULL" >/dev/null 2>"$TMPDIR_TEST/full.err"
	echo "$? $(grep -c "record of inputs is full" "$TMPDIR_TEST/full.err") $(marked "$(sed -n 's/.*policy \([^ ]*\) is made.*/\1/p' "$TMPDIR_TEST/full.err")")"
}
expect "inputs not recorded: exit 2, saying why, and the policy is marked" "2 1 marked" full_preload
container p10 "{\"io.sysctl-guard.profile\": \"$FULL\"}"
expect "... its first container does not find it by its inputs" "made ok EPERM" guarded p10
rm "$PROFILES/$FULL.json"

# Preloading a profile again after its text changed: the new policy takes
# the mark, the old one goes at the next gc; other profiles keep theirs.
sed -i 's/"kernel.domainname", "access": "read"/"kernel.domainname", "access": "none"/' "$PROFILES/$BIG.json"
OUT=$("$SG" preload "$BIG" 2>&1)
KEY_BIG2=$(key_of "profile $BIG" "$OUT")
expect "the changed profile is a new policy, marked; the old one is unmarked; the other profile keeps its mark" \
	"new marked unmarked marked" \
	sh -c "echo $([ "$KEY_BIG2" != "$KEY_BIG" ] && echo new || echo same) $(marked "$KEY_BIG2") $(marked "$KEY_BIG") $(marked "$KEY_SMALL")"
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "gc removes the old one, keeps the new" "gone present" sh -c "echo $(present "$KEY_BIG") $(present "$KEY_BIG2")"
container p5 "{\"io.sysctl-guard.profile\": \"$BIG\"}"
expect "a container of the changed profile gets the new policy, preloaded" "reused EPERM ok" guarded p5
expect "... by its key" "$KEY_BIG2" policy_of p5

# Two versions of a profile preloaded at the same time, over and over: one
# of them holds the mark each time, never neither and never both.
# Each under a node config of its own, whose profiles_dir holds one version.
mkdir -p "$TMPDIR_TEST/a" "$TMPDIR_TEST/b"
cp "$PROFILES/$SMALL.json" "$TMPDIR_TEST/a/$SMALL.json"
sed 's/"access": "read"/"access": "none"/' "$PROFILES/$SMALL.json" >"$TMPDIR_TEST/b/$SMALL.json"
for v in a b; do
	echo "{ \"version\": 1, \"profiles_dir\": \"$TMPDIR_TEST/$v\" }" >"$TMPDIR_TEST/$v-config.json"
done
race_marks() {
	local i
	for i in 1 2 3 4 5 6 7 8; do
		"$SG" preload --config "$TMPDIR_TEST/a-config.json" "$SMALL" >/dev/null 2>&1 &
		"$SG" preload --config "$TMPDIR_TEST/b-config.json" "$SMALL" >/dev/null 2>&1
		wait $!
		ls "$POLICIES"/*/"preloaded:profile:$SMALL" 2>/dev/null | wc -l
	done | sort -u | tr '\n' ' ' | sed 's/ $//'
}
expect "concurrent preloads of one profile leave exactly one mark" "1" race_marks

# A mark keeps a policy of this build's program only: one whose info names
# another program (an older build's, say) goes at gc like any unused one.
OUT=$("$SG" preload "$NEW" 2>&1)
KEY_NEW=$(key_of "profile $NEW" "$OUT")
stop p9
python3 - "$POLICIES/$KEY_NEW/info" <<'PY'
import json, subprocess, sys
pin = sys.argv[1]
value = json.loads(subprocess.check_output(["bpftool", "-j", "map", "lookup", "pinned", pin, "key", "0", "0", "0", "0"]))["value"]
value = [int(b, 16) for b in value]
fake = b"0000000000000000-1"
value[16:16 + len(fake) + 1] = list(fake) + [0]  # sg_policy_info.program_key
subprocess.check_call(["bpftool", "map", "update", "pinned", pin, "key", "0", "0", "0", "0", "value"] + [str(b) for b in value])
PY
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "gc frees a marked policy of another build's program" "gone" present "$KEY_NEW"

stop p2
# gc --preloaded frees every unused preloaded policy: only on a node of no marks of its own.
if [ "$CLEAN_NODE" = yes ]; then
	"$SG" gc --preloaded --min-age 0 >/dev/null 2>&1
	expect "gc --preloaded removes preloaded policies no guard uses" "gone present" \
		sh -c "echo $(present "$KEY_SMALL") $(present "$KEY_BIG2")"
else
	echo "note: the node has preloaded policies of its own: gc --preloaded not tried"
fi

# With no name: every installed profile, and the baseline alone for containers
# without one; marks of labels not among them go (node-wide: only tried where
# this test's marks are the only ones).
printf '{"version": 1, "default": "read-write", "rules": [{"name": "kernel.domainname", "access": "read"}, {"name": "kernel.sg_preload_base_%s", "access": "none"}]}\n' \
	"$$" >"$PROFILES/$BASE.json"
rm "$PROFILES/$ONE.json"
node_config "$BASE"
if [ "$CLEAN_NODE" = yes ]; then
	OUT=$("$SG" preload 2>&1)
	KEY_BASE=$(key_of "baseline (profile $BASE)" "$OUT")
	expect "preload with no name: each installed profile and the baseline" \
		"baseline (profile $BASE) profile $BASE profile $BIG profile $NEW profile $SMALL profile $DOTTED" \
		sh -c "sed -n 's/^preloaded \(.*\): policy.*/\1/p' <<'EOF' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//'
$OUT
EOF"
	expect "... and the marks of a profile removed since and of one not installed go" "0" \
		sh -c "ls $POLICIES/*/preloaded:profile:$ONE $POLICIES/*/preloaded:profile:k8s-safe 2>/dev/null | wc -l"
	container p4 "{}"
	expect "a container without annotation finds the baseline preloaded" "reused EPERM ok" guarded p4
	expect "... its policy" "$KEY_BASE" policy_of p4
	stop p4
else
	echo "note: the node has preloaded policies of its own: a preload of everything not tried"
fi

for id in p3 p5 p6 p7 p8 p10; do stop "$id"; done
finish
