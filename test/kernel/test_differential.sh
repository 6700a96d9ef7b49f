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

check_policy mixed '{ "version": 1, "default": "read", "rules": [
  { "name": "kernel.random.*", "access": "none" },
  { "name": "net.**.rp_filter", "access": "none" },
  { "name": "vm.*", "access": "none" },
  { "name": "vm.swappiness", "access": "read" },
  { "name": "kernel.*", "access": "none" },
  { "name": "kernel.ostype", "access": "read" },
  { "name": "net.ipv4.conf.*.forwarding", "access": "none" },
  { "name": "net.ipv?.conf.lo.*", "access": "none" },
  { "name": "fs/inotify/max_user_watches", "access": "none" } ] }'

check_policy allowlist '{ "version": 1, "default": "none", "rules": [
  { "name": "net.ipv4.*", "access": "read" },
  { "name": "**.max_*", "access": "read" },
  { "name": "kernel.**", "access": "read" },
  { "name": "kernel.random.**", "access": "none" },
  { "name": "net.core.somaxconn", "access": "read-write" } ] }'

# A policy's tables are one map; its long names another, made only when it
# has any: "mixed" above has none, and the kernel agreed with the evaluator on it.
tables_of() { ls "/sys/fs/bpf/sysctl-guard/policies/$(policy_of_cgroup "$1")" | tr '\n' ' '; }
new_cgroup CG_TABLES
attach "$CG_TABLES" "$TMPDIR_TEST/mixed.json"
expect "a policy without long names pins no map for them" \
	"info rule_names tables " tables_of "$CG_TABLES"
new_cgroup CG_ALL
attach "$CG_ALL" "$(policy all-tables '{ "version": 1, "rules": [
  { "name": "net.ipv4.conf.sg-an-interface-name-of-many-letters.rp_filter", "access": "none" },
  { "name": "kernel.domainname", "access": "read-write", "values": ["a", "b"] },
  { "name": "kernel.hostname", "access": "read-write", "rewrite": "x" } ] }')"
expect "one with a long name, values and a rewrite pins the long names' map too" \
	"exact_long info rule_names tables " tables_of "$CG_ALL"
expect "... and its allowed value is allowed" "ok" io "$CG_ALL" --uts write kernel/domainname b
expect "... and another denied" "EPERM" io "$CG_ALL" --uts write kernel/domainname c

# Every name an exact rule of its own, every other one denied: both exact
# tables (names of 48 bytes and more are in the long one, sysctl_guard.h).
NAMES=$(unshare -n find /proc/sys -type f 2>/dev/null | sed 's|^/proc/sys/||' | sort)
expect "some names take the long exact table" "yes" sh -c \
	"[ \$(echo '$NAMES' | awk 'length(\$0) >= 48' | wc -l) -gt 0 ] && echo yes"
check_policy exact "$(echo "$NAMES" | python3 -c 'import json, sys
names = sys.stdin.read().split()
rules = [{"name": n, "access": "none" if i % 2 else "read"} for i, n in enumerate(names)]
print(json.dumps({"version": 1, "default": "read", "rules": rules}))')"
finish
