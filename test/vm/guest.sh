#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs in the guest (test/vm/run.sh): the kernel suite's tests, one at a time,
# with the environment meson gives them (test/meson.build), each between
# "sg-vm: begin NAME" and "sg-vm: result NAME STATUS" on the console.
#
#   test/vm/guest.sh BUILD_DIR TEST...
set -u
BUILD=$1
shift
export SG=$BUILD/sysctl-guard SG_DYNAMIC=$BUILD/sysctl-guard-dynamic
export SG_IO=$BUILD/test/sysctl_io SYSCTL_GUARD_CONFINE=strict

echo "sg-vm: kernel $(uname -r), expected rewrites: ${SG_VM_REWRITE:-?}"
for name in "$@"; do
	echo "sg-vm: begin $name"
	timeout 600 "test/kernel/test_$name.sh" 2>&1
	echo "sg-vm: result $name $?"
done
