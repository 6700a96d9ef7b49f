# SPDX-License-Identifier: Apache-2.0
# What the node's pins say, for the shell suites (sourced by kernel/lib.sh and oci/lib.sh).

# inputs_naming KEY: how many recorded container inputs name policy KEY (source.h):
# a hook that found its policy by its inputs records none more.
inputs_naming() {
	local map
	for map in /sys/fs/bpf/sysctl-guard/programs/*/inputs; do
		[ -e "$map" ] && bpftool -j map dump pinned "$map"
	done | python3 -c '
import json, sys
key = sys.argv[1]
n = 0
text = sys.stdin.read().strip()
# bpftool prints the value as bytes: the policy key is its first 24, NUL padded.
for dump in json.loads("[" + text.replace("]\n[", "],\n[") + "]") if text else []:
    for e in dump:
        if bytes(int(b, 16) for b in e["value"][:24]).rstrip(b"\0").decode() == key:
            n += 1
print(n)' "$1"
}

# seen_records CGID: how many learning records (the programs' seen maps) name cgroup CGID.
seen_records() {
	local map
	for map in /sys/fs/bpf/sysctl-guard/programs/*/seen; do
		[ -e "$map" ] && bpftool -j map dump pinned "$map"
	done | python3 -c '
import json, sys
cgid = int(sys.argv[1])
text = sys.stdin.read().strip()
n = 0
for dump in json.loads("[" + text.replace("]\n[", "],\n[") + "]") if text else []:
    for e in dump:
        if int.from_bytes(bytes(int(b, 16) for b in e["key"][:8]), "little") == cgid:
            n += 1
print(n)' "$1"
}
