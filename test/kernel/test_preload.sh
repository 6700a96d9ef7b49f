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

# The node's preloaded set is replaced here: put back what it was on exit.
preloaded_keys() { for m in "$POLICIES"/*/preloaded; do [ -e "$m" ] && basename "$(dirname "$m")"; done; }
BEFORE=$(preloaded_keys)
OURS=()
restore() {
	local key
	for key in "${OURS[@]}"; do rm -f "$POLICIES/$key/preloaded"; done
	for key in $BEFORE; do
		[ -e "$POLICIES/$key/info" ] && [ ! -e "$POLICIES/$key/preloaded" ] &&
			bpftool map pin pinned "$POLICIES/$key/info" "$POLICIES/$key/preloaded"
	done
	"$SG" gc >/dev/null 2>&1
	cleanup
}
trap restore EXIT

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
marked() { [ -e "$POLICIES/$1/preloaded" ] && echo marked || echo unmarked; }

OUT=$("$SG" preload "$BIG" "$SMALL" 2>&1)
expect "preload of two profiles succeeds" "0" sh -c "\"$SG\" preload $BIG $SMALL >/dev/null 2>&1; echo \$?"
expect "it names the rules of each" "3002 2" sh -c "sed -n 's/.*(\([0-9]*\) rules)$/\1/p' <<'EOF' | tr '\n' ' ' | sed 's/ $//'
$OUT
EOF"
KEY_BIG=$(key_of "profile $BIG" "$OUT")
KEY_SMALL=$(key_of "profile $SMALL" "$OUT")
OURS+=("$KEY_BIG" "$KEY_SMALL")
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

# A later preload is the new set: what it leaves out goes at the next gc.
"$SG" preload "$SMALL" >/dev/null 2>&1
expect "preloading only the small profile unmarks the large one" "unmarked marked" \
	sh -c "echo $(marked "$KEY_BIG") $(marked "$KEY_SMALL")"
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "... which gc then removes" "gone" present "$KEY_BIG"

# With no name: every installed profile, and the baseline alone for containers without one.
printf '{"version": 1, "default": "read-write", "rules": [{"name": "kernel.domainname", "access": "read"}, {"name": "kernel.sg_preload_base_%s", "access": "none"}]}\n' \
	"$$" >"$PROFILES/$BASE.json"
node_config "$BASE"
OUT=$("$SG" preload 2>&1)
KEY_BASE=$(key_of baseline "$OUT")
OURS+=("$(key_of "profile $BASE" "$OUT")" "$(key_of "profile $SMALL" "$OUT")" "$KEY_BASE")
expect "preload with no name: each installed profile and the baseline" \
	"baseline profile $BASE profile $BIG profile $SMALL" \
	sh -c "sed -n 's/^preloaded \(.*\): policy.*/\1/p' <<'EOF' | sort | tr '\n' ' ' | sed 's/ $//'
$OUT
EOF"
OURS+=("$(key_of "profile $BIG" "$OUT")")
container p4 "{}"
expect "a container without annotation finds the baseline preloaded" "reused EPERM ok" guarded p4
expect "... its policy" "$KEY_BASE" policy_of p4

for id in p2 p3 p4; do stop "$id"; done
finish
