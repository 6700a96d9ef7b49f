#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package: dpkg-buildpackage builds it from this tree, lintian
# finds no error, and installed on this machine it guards an annotated
# Podman container with no --hooks-dir (Podman reads the package's hooks.d
# file). It is purged again, also when a check fails.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
for tool in dpkg-buildpackage dh lintian podman git; do
	command -v "$tool" >/dev/null || skip "$tool is not installed"
done
dpkg -s sysctl-guard >/dev/null 2>&1 && skip "a sysctl-guard package is installed here already: not replaced by a test"

# The source files as they are in the work tree (what git tracks or would),
# built out of tree.
SRC=$WORK/src/sysctl-guard
mkdir -p "$SRC"
git -C "$ROOT" ls-files -z --cached --others --exclude-standard | (cd "$ROOT" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$SRC"
# The unit suite has run already: nocheck.
if ! (cd "$SRC" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -b -us -uc >"$WORK/build.log" 2>&1); then
	tail -20 "$WORK/build.log"
	echo "FAIL: dpkg-buildpackage failed"
	exit 1
fi
VERSION=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
DEB=$WORK/src/sysctl-guard_${VERSION}_$(dpkg --print-architecture).deb
expect "dpkg-buildpackage built sysctl-guard_VERSION_ARCH.deb" "yes" sh -c "[ -f '$DEB' ] && echo yes"
# lintian leaves temporary files in TMPDIR: in WORK, they go with it.
expect "lintian finds no error" "" sh -c "TMPDIR='$WORK' lintian --fail-on error '$DEB' 2>/dev/null | grep '^E:'"
expect "the configuration is a conffile" "/etc/sysctl-guard/config.json" sh -c \
	"dpkg-deb --ctrl-tarfile '$DEB' | tar -xOf - ./conffiles | grep config.json"

note_podman_parent
purge() {
	dpkg --purge sysctl-guard >/dev/null 2>&1
	remove_podman_leftovers
	cleanup
}
trap purge EXIT
dpkg -i "$DEB" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; echo "FAIL: dpkg -i"; exit 1; }
expect "installed: the shared build, with journal support" "sysctl-guard $VERSION (+journal)" /usr/sbin/sysctl-guard --version
expect "installed units pass systemd-analyze verify" "" sh -c \
	'systemd-analyze verify --man=no /lib/systemd/system/sysctl-guard-*.service /lib/systemd/system/sysctl-guard-gc.timer 2>&1'

# Podman with its default hooks directories: no --hooks-dir.
podman_run() {
	podman --runtime runc --cgroup-manager cgroupfs --root "$WORK/storage" --runroot "$WORK/run" \
		run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --privileged \
		"$@" --rootfs "$WORK/rootfs" sh -c "$PROBE_CMD" </dev/null 2>&1
}
expect "podman without --hooks-dir: the package's hook guards an annotated container" "Linux
sh: write error: Operation not permitted
write-denied" podman_run --annotation io.sysctl-guard.profile=read-only
expect "... and leaves one without the annotation alone" "Linux
write-ok" podman_run

dpkg --purge sysctl-guard >"$WORK/purge.log" 2>&1 || { cat "$WORK/purge.log"; echo "FAIL: dpkg --purge"; }
expect "purged: nothing of the package is left" "" sh -c \
	'ls -d /usr/sbin/sysctl-guard /usr/share/containers/oci/hooks.d/sysctl-guard.json /etc/sysctl-guard /lib/systemd/system/sysctl-guard-* 2>/dev/null'
finish
