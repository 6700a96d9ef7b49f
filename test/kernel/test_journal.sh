#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `monitor --journal`: a denial reaches the systemd journal as an entry with
# fields of its own. A real systemd-journald runs here in a mount namespace
# of the test's own, with /run (its sockets) and the journal's directories
# on tmpfs: nothing reaches the host's journal.
[ -n "${SG_JOURNAL_NS:-}" ] || exec env SG_JOURNAL_NS=1 unshare -m --propagation private "$0" "$@"
. "$(dirname "$0")/lib.sh"

JOURNALD=/lib/systemd/systemd-journald
[ -x "$JOURNALD" ] || skip "systemd-journald is not installed"
"$SG" --version | grep -q -- "-journal" &&
	skip "this build has no journal support (a static binary: libsystemd has no static archive)"

mount -t tmpfs tmpfs /run || skip "cannot mount a tmpfs on /run"
mkdir -p /run/systemd/journal /run/log/journal
[ -d /var/log/journal ] && mount -t tmpfs tmpfs /var/log/journal
"$JOURNALD" 2>"$TMPDIR_TEST/journald.err" &
SLEEPERS+=("$!")
for _ in $(seq 200); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
[ -S /run/systemd/journal/socket ] || { echo "FAIL: journald did not start: $(cat "$TMPDIR_TEST/journald.err")"; exit 1; }

"$SG" monitor --journal 2>"$TMPDIR_TEST/monitor.err" &
MONITOR=$!
SLEEPERS+=("$MONITOR")
for _ in $(seq 200); do grep -q monitoring "$TMPDIR_TEST/monitor.err" && break; sleep 0.05; done

container journal-c '{"io.sysctl-guard.profile": "read-only"}'
hook_created journal-c >/dev/null || echo "FAIL: the hook refused journal-c"
expect "a write in the guarded container is denied" "EPERM" io "$CG" --uts write kernel/domainname sg-journal
sleep 0.5 # the monitor polls its ring buffer every 200 ms
kill -TERM "$MONITOR"
wait "$MONITOR" 2>/dev/null
expect "the journal has the denial, field by field" \
	"journal-c kernel.domainname write deny sg-journal 4 sysctl-guard" python3 -c '
import json, subprocess
out = subprocess.run(["journalctl", "-D", "/run/log/journal", "-o", "json", "SYSLOG_IDENTIFIER=sysctl-guard"],
                     capture_output=True, text=True).stdout
for line in out.splitlines():
    e = json.loads(line)
    if e.get("VERDICT") == "deny":
        print(e["CONTAINER_ID"], e["SYSCTL"], e["ACCESS"], e["VERDICT"], e["VALUE"], e["PRIORITY"], e["SYSLOG_IDENTIFIER"])'
expect_match "and its message is monitor's line" "write kernel.domainname \"sg-journal\": deny" \
	journalctl -D /run/log/journal -o cat SYSLOG_IDENTIFIER=sysctl-guard
finish
