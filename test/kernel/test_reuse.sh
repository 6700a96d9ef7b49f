#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A container whose inputs made a policy before reuses it without parsing;
# any input that changes (the profile's text, the baseline's, the node
# config, the mode annotation, linux.sysctl) makes the policy again, and the
# container gets what the changed input says. gc forgets the inputs of the
# policies it removes.
. "$(dirname "$0")/lib.sh"

use_own_node
# Names unique to this run: no policy on the node was made from these inputs.
P=reuse-$$
BASE=reuse-base-$$
# profile NAME DOMAINNAME_ACCESS [HOSTNAME_ACCESS]
profile() {
	printf '{"version": 1, "default": "read-write", "rules": [{"name": "kernel.domainname", "access": "%s"}, {"name": "kernel.hostname", "access": "%s"}]}\n' \
		"$2" "${3:-read-write}" >"$PROFILES/$1.json"
}
profile "$P" read
profile "$BASE" read-write

ANN="{\"io.sysctl-guard.profile\": \"$P\"}"

container r1 "$ANN"
expect "the first container makes its policy" "made EPERM ok" guarded r1
container r2 "$ANN"
expect "the next one with the same inputs reuses it" "reused EPERM ok" guarded r2
expect "both name the same policy" "$(policy_of r1)" policy_of r2

profile "$P" read-write
container r3 "$ANN"
expect "the profile's text changed: made again, and what it says now holds" "made ok ok" guarded r3
profile "$P" read
container r4 "$ANN"
expect "the text as it was: the first policy again" "reused EPERM ok" guarded r4
expect "... by the same key" "$(policy_of r1)" policy_of r4

container r5 "{\"io.sysctl-guard.profile\": \"$P\", \"io.sysctl-guard.mode\": \"audit\"}"
expect "a mode annotation is an input: audit lets the write through" "made ok ok" guarded r5
container r6 "$ANN" "" '{"kernel.domainname": "x"}'
expect "linux.sysctl is an input: the pinned value may be written" "made ok ok" guarded r6
container r7 "$ANN" "" '{"kernel.domainname": "z"}'
expect "another pinned value is another input" "made EPERM ok" guarded r7

node_config "$BASE"
container r8 "$ANN"
expect "the node config is an input: a baseline now applies" "made EPERM ok" guarded r8
profile "$BASE" read-write read
container r9 "$ANN"
expect "the baseline profile's text is an input" "made EPERM EPERM" guarded r9
container r10 "$ANN"
expect "... and reused when nothing changed" "reused EPERM EPERM" guarded r10
node_config

INLINE=$(python3 -c 'import json,sys; print(json.dumps({"io.sysctl-guard.policy": json.dumps({"version": 1, "default": "read-write", "rules": [{"name": "kernel.hostname", "access": "read"}, {"name": "kernel.sg_reuse_" + sys.argv[1], "access": "none"}]})}))' "$$")
container r11 "$INLINE"
expect "an inline policy is made once" "made ok EPERM" guarded r11
container r12 "$INLINE"
expect "... and reused" "reused ok EPERM" guarded r12

# Whether the kernel applies a rewrite is an input: a policy made where it
# does not (rewrite rules deny there) is never found where it does. The
# fault seam makes this hook's probe say the kernel ignores rewrites.
REWRITE=reuse-rewrite-$$
printf '{"version": 1, "rules": [{"name": "kernel.domainname", "access": "read-write", "rewrite": "sandbox"}, {"name": "kernel.sg_reuse_rewrite_%s", "access": "none"}]}\n' \
	"$$" >"$PROFILES/$REWRITE.json"
rewritten() { # ID [VAR=VALUE...]: made or reused, then a write of kernel.domainname and what reads back
	hook_created "$@" || return
	echo $(io "$CG" --uts write kernel/domainname x read kernel/domainname)
}
if grep -q 'rewrite=0' /run/sysctl-guard/probe 2>/dev/null; then
	echo "note: this kernel ignores rewrites: the rewrite probe as an input is not checked"
else
	container w1 "{\"io.sysctl-guard.profile\": \"$REWRITE\"}"
	expect "a kernel that ignores rewrites: the rewrite rule denies" "made EPERM ok (none)" \
		rewritten w1 SYSCTL_GUARD_FAULT=rewrite
	expect "... and status says so" "1" sh -c \
		"\"$SG\" status --container w1 | grep -c 'this kernel ignores bpf_sysctl_set_new_value(): the policy.s rewrite and clamp rules deny instead'"
	container w0 '{"io.sysctl-guard.profile": "read-only"}'
	hook_created w0 SYSCTL_GUARD_FAULT=rewrite >/dev/null
	expect "... but not of a policy without rewrite or clamp rules (one guarded, no note)" "1 0" sh -c \
		"echo \$(\"$SG\" status --container w0 | grep -c 'profile read-only') \$(\"$SG\" status --container w0 | grep -c 'ignores bpf_sysctl_set_new_value')"
	state w0 stopped 0 | "$SG" hook poststop 2>/dev/null
	container w2 "{\"io.sysctl-guard.profile\": \"$REWRITE\"}"
	expect "the same inputs where rewrites work: made again, and rewritten" "made ok ok sandbox" rewritten w2
	container w3 "{\"io.sysctl-guard.profile\": \"$REWRITE\"}"
	expect "... and reused there" "reused ok ok sandbox" rewritten w3
fi

# Other inputs that compile to the same tables share them: the same rules
# of a large profile in another text find the first one's tables by their key.
BIG_RULES=$(for i in $(seq 3000); do printf '{"name": "net.ipv4.conf.sgr%d.rp_filter", "access": "none"}, ' "$i"; done)
printf '{"version": 1, "default": "read-write", "rules": [%s{"name": "kernel.domainname", "access": "read"}, {"name": "kernel.sg_reuse_big_%s", "access": "none"}]}\n' \
	"$BIG_RULES" "$$" >"$PROFILES/big-$$.json"
python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])), indent=2))' \
	"$PROFILES/big-$$.json" >"$PROFILES/big2-$$.json"
container b1 "{\"io.sysctl-guard.profile\": \"big-$$\"}"
expect "a large profile is made" "made EPERM ok" guarded b1
container b2 "{\"io.sysctl-guard.profile\": \"big2-$$\"}"
expect "the same rules in another text: not found by its inputs, and enforced" "made EPERM ok" guarded b2
expect "... with the first one's tables" "$(policy_of b1)" policy_of b2

# gc removes a policy no guard uses, and forgets which inputs made it.
KEY=$(policy_of r11)
for id in r11 r12; do state "$id" stopped 0 | "$SG" hook poststop 2>/dev/null; done
expect "the inline policy's inputs are recorded" "1" inputs_naming "$KEY"
"$SG" gc --min-age 0 >/dev/null 2>&1
expect "gc removed the policy" "gone" sh -c "[ -e /sys/fs/bpf/sysctl-guard/policies/$KEY ] && echo left || echo gone"
expect "... and forgot its inputs" "0" inputs_naming "$KEY"
container r13 "$INLINE"
expect "the same inline policy is made again after gc" "made ok EPERM" guarded r13

for id in r1 r2 r3 r4 r5 r6 r7 r8 r9 r10 r13 b1 b2 w1 w2 w3; do state "$id" stopped 0 | "$SG" hook poststop 2>/dev/null; done
finish

