#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# systemd-analyze verify passes on each unit of examples/systemd, naming the
# built binary where they name the installed one: no warning, no error.
# Usage: units_verify.sh SYSCTL_GUARD_BINARY SOURCE_ROOT
set -u
. "$(dirname "$0")/../assert.sh"
BIN=$1 ROOT=$2
command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
DIR=$(mktemp -d /tmp/sg-units.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
trap 'exit 143' TERM # through the EXIT trap: bash skips it on a signal
for unit in "$ROOT"/examples/systemd/*; do
	sed "s|/usr/sbin/sysctl-guard|$BIN|" "$unit" >"$DIR/$(basename "$unit")"
done
for unit in "$DIR"/*; do
	expect "systemd-analyze verify $(basename "$unit")" "" systemd-analyze verify --man=no "$unit"
done
expect "the monitor unit asks for the journal" "ExecStart=$BIN monitor --journal" \
	grep '^ExecStart=' "$DIR/sysctl-guard-monitor.service"
expect "the preload unit runs before the container runtimes" "yes" sh -c \
	"grep -q '^Before=.*podman.service.*crio.service.*containerd.service' '$DIR/sysctl-guard-preload.service' && echo yes"
finish
