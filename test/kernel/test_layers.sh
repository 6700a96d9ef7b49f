#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A baseline and a container's annotation together, through the hook: the
# annotation only narrows, also when it rewrites or clamps (the value stored
# must be one the baseline takes too), and linux.sysctl pairs, the empty
# value among them, are always writable.
. "$(dirname "$0")/lib.sh"

use_own_node
cat >"$PROFILES/base.json" <<'JSON'
{ "version": 1, "default": "read", "rules": [
  { "name": "net.core.somaxconn", "access": "read-write", "range": [128, 1024] },
  { "name": "kernel.domainname", "access": "read-write", "rewrite": "sandbox" } ] }
JSON
node_config base

# annotated ID POLICY_JSON: a container whose annotation is that inline policy, guarded.
annotated() {
	local ann
	ann=$(python3 -c 'import json, sys; print(json.dumps({"io.sysctl-guard.policy": sys.argv[1]}))' "$2")
	container "$1" "$ann"
	hook_created "$1" >/dev/null || echo "FAIL: the hook refused $1"
}

annotated layers-rewrite '{ "version": 1, "rules": [
  { "name": "net.core.somaxconn", "access": "read-write", "rewrite": "65535" } ] }'
# Where the kernel ignores rewrites (the hook has probed by now), every
# rewrite and clamp is a denial that leaves the value as it was.
SOMAXCONN=$(unshare -n cat /proc/sys/net/core/somaxconn)
DOMAINNAME=$(unshare -u cat /proc/sys/kernel/domainname)
expect "an annotation's rewrite to a value the baseline refuses: denied" "EPERM
ok $SOMAXCONN" \
	io "$CG" --net write net/core/somaxconn 200 read net/core/somaxconn

annotated layers-clamp-out '{ "version": 1, "rules": [
  { "name": "net.core.somaxconn", "access": "read-write", "range": [2000, 3000],
    "on_violation": "clamp" } ] }'
expect "an annotation's clamp to outside the baseline's range: denied" "EPERM" \
	io "$CG" --net write net/core/somaxconn 500

annotated layers-clamp-in '{ "version": 1, "rules": [
  { "name": "net.core.somaxconn", "access": "read-write", "range": [200, 300],
    "on_violation": "clamp" } ] }'
if rewrites_ignored; then
	expect "an annotation's clamp inside the baseline's range: denied, as this kernel ignores rewrites" "EPERM
ok $SOMAXCONN" io "$CG" --net write net/core/somaxconn 500 read net/core/somaxconn
else
	expect "an annotation's clamp inside the baseline's range: clamped" "ok
ok 300" io "$CG" --net write net/core/somaxconn 500 read net/core/somaxconn
fi

annotated layers-rewrite-other '{ "version": 1, "rules": [
  { "name": "kernel.domainname", "access": "read-write", "rewrite": "elsewhere" } ] }'
expect "an annotation's rewrite over the baseline's own: denied" "EPERM" \
	io "$CG" --uts write kernel/domainname x

annotated layers-values '{ "version": 1, "rules": [
  { "name": "kernel.domainname", "access": "read-write", "values": ["sandbox"] } ] }'
if rewrites_ignored; then
	expect "the baseline's rewrite: denied, as this kernel ignores rewrites" "EPERM
ok $DOMAINNAME" io "$CG" --uts write kernel/domainname x read kernel/domainname
else
	expect "the baseline rewrites, the annotation takes the result: stored" "ok
ok sandbox" io "$CG" --uts write kernel/domainname x read kernel/domainname
fi

# runc writes a pair of "" as a write of no bytes.
container layers-empty '{"io.sysctl-guard.profile": "read-only"}' "" '{"kernel.domainname": ""}'
hook_created layers-empty >/dev/null || echo "FAIL: the hook refused layers-empty"
expect "an empty linux.sysctl value is writable" "ok" io "$CG" --uts write kernel/domainname ""
expect "and nothing else is" "EPERM" io "$CG" --uts write kernel/domainname x
# A pair with a newline inside is written as it stands, and only so.
container layers-newline '{"io.sysctl-guard.profile": "read-only"}' "" '{"kernel.domainname": "a\nb"}'
hook_created layers-newline >/dev/null || echo "FAIL: the hook refused layers-newline"
expect "a linux.sysctl value with a newline inside is writable as written" "ok" \
	io "$CG" --uts write kernel/domainname $'a\nb'
expect "but not as its tokens with a space" "EPERM" io "$CG" --uts write kernel/domainname "a b"

# Learning under this baseline: its rewrite of kernel.domainname changed the
# write, so the learned policy leaves it out (allowing it would let through
# what the guard did not), and learn says so.
container layers-learn '{"io.sysctl-guard.profile": "audit", "io.sysctl-guard.learn": "true"}'
hook_created layers-learn >/dev/null || echo "FAIL: the hook refused layers-learn"
io "$CG" --uts write kernel/domainname $'a\nb' >/dev/null
"$SG" learn --cgroup "$CG" >"$TMPDIR_TEST/learned.json" 2>"$TMPDIR_TEST/learned.err"
DID="rewritten or clamped"
rewrites_ignored && DID="denied"
expect "a write the baseline changed or denied is left out of the learned policy, and said" "0 1" sh -c \
	"echo \$(grep -c domainname \"$TMPDIR_TEST/learned.json\") \$(grep -c '$DID: write kernel.domainname \"a.nb\"' \"$TMPDIR_TEST/learned.err\")"
finish
