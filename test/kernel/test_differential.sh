#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# For every name under /proc/sys on this machine, the kernel's read decision
# equals the userspace evaluator's (`explain --batch`), for several policies.
. "$(dirname "$0")/lib.sh"

check_policy() {
	local label=$1 json=$2 cg file
	new_cgroup cg
	file=$(policy "$label" "$json")
	attach "$cg" "$file" || return
	# Inside a new net namespace too, so per-namespace net names take part.
	io "$cg" --net walk | sort >"$TMPDIR_TEST/$label.kernel"
	awk '$2 == "ok" || $2 == "EPERM" { print $1 }' "$TMPDIR_TEST/$label.kernel" |
		"$SG" explain "$file" --batch |
		awk '{ print $1, ($2 == "allow" ? "ok" : "EPERM") }' | sort >"$TMPDIR_TEST/$label.eval"
	local n
	n=$(wc -l <"$TMPDIR_TEST/$label.eval")
	expect "$label: kernel and evaluator agree on $n names" "" \
		diff <(awk '$2 == "ok" || $2 == "EPERM"' "$TMPDIR_TEST/$label.kernel") "$TMPDIR_TEST/$label.eval"
	expect "$label: more than 100 names compared" "yes" sh -c "[ $n -gt 100 ] && echo yes"
}

MIXED='{ "version": 1, "default": "read", "rules": [
  { "name": "kernel.random.*", "access": "none" },
  { "name": "net.**.rp_filter", "access": "none" },
  { "name": "vm.*", "access": "none" },
  { "name": "vm.swappiness", "access": "read" },
  { "name": "kernel.*", "access": "none" },
  { "name": "kernel.ostype", "access": "read" },
  { "name": "net.ipv4.conf.*.forwarding", "access": "none" },
  { "name": "net.ipv?.conf.lo.*", "access": "none" },
  { "name": "fs/inotify/max_user_watches", "access": "none" } ] }'
check_policy mixed "$MIXED"
# The DFA's 32-bit layout, which only DFAs of 65,535 states or more get otherwise.
SYSCTL_GUARD_FAULT=dfa_wide check_policy mixed-wide "$MIXED"
policy_hash() { "$SG" status --cgroup "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["policy_hash"])'; }
new_cgroup NARROW
new_cgroup WIDE
attach "$NARROW" "$TMPDIR_TEST/mixed.json" && SYSCTL_GUARD_FAULT=dfa_wide attach "$WIDE" "$TMPDIR_TEST/mixed.json"
expect "the 32-bit layout is a policy of its own" "yes" sh -c "[ \"$(policy_hash "$NARROW")\" != \"$(policy_hash "$WIDE")\" ] && echo yes"

check_policy allowlist '{ "version": 1, "default": "none", "rules": [
  { "name": "net.ipv4.*", "access": "read" },
  { "name": "**.max_*", "access": "read" },
  { "name": "kernel.**", "access": "read" },
  { "name": "kernel.random.**", "access": "none" },
  { "name": "net.core.somaxconn", "access": "read-write" } ] }'
finish
