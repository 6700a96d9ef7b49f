#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A root process in a guarded cgroup without CAP_SYS_ADMIN and CAP_BPF, and,
# like a container, without the host's bpffs, cannot detach its guard.
. "$(dirname "$0")/lib.sh"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"

DENY=$(policy deny '{ "version": 1, "default": "read" }')
new_cgroup CG
CGID=$(stat -c %i "$CG")
attach "$CG" "$DENY" || finish
PROG=$(bpftool cgroup show "$CG" | awk '/sysctl/ { print $1; exit }')

# Root without CAP_SYS_ADMIN and CAP_BPF, inside the guarded cgroup, in a
# mount namespace without bpffs (containers do not get the host's).
cat >"$TMPDIR_TEST/unprivileged" <<'SH'
#!/bin/sh
umount -l /sys/fs/bpf 2>/dev/null
exec setpriv --bounding-set -sys_admin,-bpf -- sh -c "$1"
SH
chmod +x "$TMPDIR_TEST/unprivileged"
unprivileged() {
	"$SG_IO" --cgroup "$CG" --uts sh "unshare -m --propagation private $TMPDIR_TEST/unprivileged '$*'"
}
expect "cannot detach the program by id" "refused" unprivileged \
	"bpftool cgroup detach $CG sysctl id $PROG >/dev/null 2>&1 && echo detached || echo refused"
expect "cannot detach the pinned link" "refused" unprivileged \
	"bpftool link detach pinned /sys/fs/bpf/sysctl-guard/$CGID/link >/dev/null 2>&1 && echo detached || echo refused"
expect "cannot attach an allow-all guard over it" "refused" unprivileged \
	"\"$SG\" attach --cgroup $CG --profile audit >/dev/null 2>&1 && echo attached || echo refused"
"$SG_IO" --cgroup "$CG" sh "unshare -m --propagation private $TMPDIR_TEST/unprivileged '\"$SG\" detach --cgroup $CG'" >/dev/null 2>&1
expect "still one program attached" "1" sh -c "bpftool cgroup show \"$CG\" | grep -c sysctl"
expect "and it still denies" "EPERM" io "$CG" --uts write kernel/domainname x
finish
