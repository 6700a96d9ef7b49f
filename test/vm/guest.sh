#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs in the guest (test/vm/run.sh): tests of the kernel and oci suites, one
# at a time, with the environment meson gives them (test/meson.build), each between
# "sg-vm: begin NAME" and "sg-vm: result NAME STATUS SECONDS" on the console,
# its lines prefixed with the seconds since it began.
#
#   test/vm/guest.sh BUILD_DIR SUITE/NAME...   (kernel/access: test/kernel/test_access.sh)
set -u
BUILD=$1
shift
export SG=$BUILD/sysctl-guard SG_DYNAMIC=$BUILD/sysctl-guard-dynamic
export SG_IO=$BUILD/test/sysctl_io SYSCTL_GUARD_CONFINE=strict
# The tests leave what checks our own code alone to the host's run (lib.sh).
export SG_MATRIX=1

# stamped START: each line read, after the seconds since START.
stamped() {
	local line
	while IFS= read -r line; do printf '%4d %s\n' $((SECONDS - $1)) "$line"; done
}

echo "sg-vm: kernel $(uname -r), expected rewrites: ${SG_VM_REWRITE:-?}"
for name in "$@"; do
	echo "sg-vm: begin $name"
	start=$SECONDS
	timeout 900 "test/${name%/*}/test_${name#*/}.sh" 2>&1 | stamped $start
	echo "sg-vm: result $name ${PIPESTATUS[0]} $((SECONDS - start))"
done
