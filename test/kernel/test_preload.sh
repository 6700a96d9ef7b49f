#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `preload` makes a profile's policy before any container asks for it: the
# first container that names the profile finds it by its inputs, parses
# nothing, and gets what the profile says. gc keeps preloaded policies no
# guard uses; a later preload replaces the set; bad input changes nothing.
. "$(dirname "$0")/lib.sh"

POLICIES=/sys/fs/bpf/sysctl-guard/policies
PROFILES=$TMPDIR_TEST/profiles
mkdir -p "$PROFILES"
export SYSCTL_GUARD_CONFIG=$TMPDIR_TEST/config.json
node_config() { # node_config [BASELINE_PROFILE]
	local baseline=${1:+", \"baseline\": \"$1\""}
	echo "{ \"version\": 1, \"profiles_dir\": \"$PROFILES\", \"log\": {\"level\": \"debug\", \"syslog\": false}$baseline }" >"$SYSCTL_GUARD_CONFIG"
}
node_config

# Only this run's profiles are preloaded here: their marks go on exit, and
# gc frees their policies once they are old enough.
unmark_ours() { rm -f "$POLICIES"/*/preloaded:*preload-*-$$ "$POLICIES"/*/preloaded:*preload-*-$$:; }
trap 'unmark_ours; "$SG" gc >/dev/null 2>&1; cleanup' EXIT

# Names unique to this run: no policy on the node was made from these inputs.
BIG=preload-big-$$
SMALL=preload-small-$$
BASE=preload-base-$$
RULES=$(for i in $(seq 3000); do printf '{"name": "net.ipv4.conf.sgp%d.rp_filter", "access": "none"}, ' "$i"; done)
printf '{"version": 1, "default": "read-write", "rules": [%s{"name": "kernel.domainname", "access": "read"}, {"name": "kernel.sg_preload_%s", "access": "none"}]}\n' \
	"$RULES" "$$" >"$PROFILES/$BIG.json"
printf '{"version": 1, "default": "read-write", "rules": [{"name": "kernel.hostname", "access": "read"}, {"name": "kernel.sg_preload_small_%s", "access": "none"}]}\n' \
	"$$" >"$PROFILES/$SMALL.json"

# key_of LABEL OUTPUT: the policy key preload printed for LABEL.
key_of() { sed -n "s/^preloaded $1: policy \([^ ]*\) .*/\1/p" <<<"$2"; }
# guarded ID: the hook for the last container; "reused" when it found its
# policy by its inputs, then what writes of kernel.domainname and
# kernel.hostname got.
guarded() {
	state "$1" created "$PID" | "$SG" hook createRuntime 2>"$TMPDIR_TEST/$1.err" ||
		{ echo "hook failed: $(cat "$TMPDIR_TEST/$1.err")"; return; }
	grep -q "found by its inputs" "$TMPDIR_TEST/$1.err" && echo -n "reused " || echo -n "made "
	echo "$(io "$CG" --uts write kernel/domainname x) $(io "$CG" --uts write kernel/hostname y)"
}
policy_of() { "$SG" status --container "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["policy_hash"])'; }
stop() { state "$1" stopped 0 | "$SG" hook poststop 2>/dev/null; }
present() { [ -e "$POLICIES/$1" ] && echo present || echo gone; }
marked() { ls "$POLICIES/$1" | grep -q '^preloaded:' && echo marked || echo unmarked; }

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

stop p1
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "gc keeps a preloaded policy no guard uses" "present" present "$KEY_BIG"

# Bad input fails before anything is loaded, and keeps the set as it was.
echo '{"version": 1, "rules": [{"name": "kernel.hostname", "access": "sometimes"}]}' >"$PROFILES/bad-$$.json"
expect "an invalid profile: exit 1" "1" sh -c "\"$SG\" preload $SMALL bad-$$ >/dev/null 2>&1; echo \$?"
expect "... naming the file and the problem" "1" sh -c "\"$SG\" preload $SMALL bad-$$ 2>&1 | grep -c 'bad-$$.json.*sometimes'"
expect "a profile that does not exist: exit 1" "1" sh -c "\"$SG\" preload missing-$$ >/dev/null 2>&1; echo \$?"
expect "... and the preloaded set is unchanged" "marked marked" sh -c "echo $(marked "$KEY_BIG") $(marked "$KEY_SMALL")"
rm "$PROFILES/bad-$$.json"
EMPTY=$TMPDIR_TEST/empty.json
echo "{ \"version\": 1, \"profiles_dir\": \"$TMPDIR_TEST/none\" }" >"$EMPTY"
expect "nothing to preload: exit 1, saying so" "1 1" sh -c "\"$SG\" preload --config $EMPTY 2>$TMPDIR_TEST/e; echo \$? \$(grep -c 'nothing to preload' $TMPDIR_TEST/e)"

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
stop p2
# gc --preloaded frees every unused preloaded policy: only where this test's are the only ones.
if [ -z "$(ls "$POLICIES"/*/preloaded:* 2>/dev/null | grep -v -E "preload-[a-z]+-$$:?$")" ]; then
	"$SG" gc --preloaded --min-age 0 >/dev/null 2>&1
	expect "gc --preloaded removes preloaded policies no guard uses" "gone present" \
		sh -c "echo $(present "$KEY_SMALL") $(present "$KEY_BIG2")"
else
	echo "note: the node has preloaded policies of its own: gc --preloaded not tried"
fi

# With no name: every installed profile, and the baseline alone for containers without one.
printf '{"version": 1, "default": "read-write", "rules": [{"name": "kernel.domainname", "access": "read"}, {"name": "kernel.sg_preload_base_%s", "access": "none"}]}\n' \
	"$$" >"$PROFILES/$BASE.json"
node_config "$BASE"
OUT=$("$SG" preload 2>&1)
KEY_BASE=$(key_of "baseline (profile $BASE)" "$OUT")
expect "preload with no name: each installed profile and the baseline" \
	"baseline (profile $BASE) profile $BASE profile $BIG profile $SMALL" \
	sh -c "sed -n 's/^preloaded \(.*\): policy.*/\1/p' <<'EOF' | sort | tr '\n' ' ' | sed 's/ $//'
$OUT
EOF"
container p4 "{}"
expect "a container without annotation finds the baseline preloaded" "reused EPERM ok" guarded p4
expect "... its policy" "$KEY_BASE" policy_of p4

for id in p3 p4 p5; do stop "$id"; done
finish
