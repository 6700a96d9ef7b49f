#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The node image. examples/kubernetes/image.sh builds it from this build's
# binary into a throwaway Podman store. Its default command installs into a
# temporary root; again, changing nothing; keeping a node config that is
# there; and with the DaemonSet's --config and --profiles. Then, in this
# test's own mount namespace, where /etc and /usr/local are overlays whose
# changes land in the test's directory (the host's files stay as they are),
# the image installs onto "the node" with the mounts the DaemonSet gives it,
# and Podman, reading the node's hooks.d directory, starts containers that
# the installed hook guards.
[ -n "${SG_NS_HOST:-}" ] || exec env SG_NS_HOST=1 unshare -m -n -u -i --propagation private "$0" "$@"
. "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || skip "podman is not installed"
command -v file >/dev/null || skip "file is not installed (image.sh checks with it that the binary is static)"
case $(file -bL "$SG") in
*"statically linked"* | *"static-pie linked"*) ;;
*) skip "$SG is not linked statically (a sanitizer build?): an image from scratch needs a static binary" ;;
esac

SRC=$(cd "$(dirname "$0")/../.." && pwd)
IMAGE_SH=$SRC/examples/kubernetes/image.sh
VERSION=$(sed -n "s/^  version: '\([^']*\)',\$/\1/p" "$SRC/meson.build" | head -1)
IMAGE=localhost/sysctl-guard:$VERSION
PODMAN=(podman --runtime runc --cgroup-manager cgroupfs --root "$WORK/storage" --runroot "$WORK/run")
RUN=(run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
GUARDS_BEFORE=$("$SG" status --json 2>/dev/null | python3 -c 'import json,sys; print(" ".join(g["container_id"] for g in json.load(sys.stdin)))')

note_podman_parent
image_cleanup() {
	"${PODMAN[@]}" rm -af -t 0 >/dev/null 2>&1
	"${PODMAN[@]}" rmi -af >/dev/null 2>&1
	local m
	for m in /etc /usr/local; do
		findmnt -n -o OPTIONS "$m" 2>/dev/null | grep -q "upperdir=$WORK/" && umount -l "$m"
	done
	remove_podman_leftovers
	cleanup
}
trap image_cleanup EXIT

build_image() {
	"$IMAGE_SH" --binary "$1" -- "${PODMAN[@]:1}" </dev/null 2>&1 | tail -1
}
expect "image.sh builds the image from this build's binary; its last line is the reference" \
	"$IMAGE" build_image "$SG"
if [ -n "${SG_DYNAMIC:-}" ] && file -bL "$SG_DYNAMIC" | grep -q "dynamically linked"; then
	expect_match "image.sh refuses a dynamic binary, saying why" \
		"is not linked statically .*dynamically linked.*has no libc" build_image "$SG_DYNAMIC"
fi
expect "the image: the binary as entrypoint, install --root /host as its command" \
	"[/usr/local/sbin/sysctl-guard] [install --root /host]" \
	"${PODMAN[@]}" image inspect --format '{{.Config.Entrypoint}} {{.Config.Cmd}}' "$IMAGE"

# image_run [PODMAN RUN OPTION...] [-- COMMAND...]: the image run; its output and exit status.
image_run() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	"${PODMAN[@]}" "${RUN[@]}" "${opts[@]}" "$IMAGE" "$@" </dev/null 2>&1
	echo "exit $?"
}
BIN=/usr/local/sbin/sysctl-guard
HOOKS=/etc/containers/oci/hooks.d/sysctl-guard.json
CONFIG=/etc/sysctl-guard/config.json
NODE=$WORK/node
mkdir -p "$NODE"

expect "the image's command installs the binary, the node config and the hooks.d file under /host" \
	"$BIN: installed
$CONFIG: installed
$HOOKS: installed
sysctl-guard $VERSION: 3 files installed under /host/
exit 0" image_run -v "$NODE:/host"
expect_match "... the binary runs" "^sysctl-guard $VERSION \(-journal\)$" "$NODE$BIN" --version
expect "... and is this build's, byte for byte" "same" sh -c "cmp -s '$SG' '$NODE$BIN' && echo same"
expect "... nothing else is written; modes 755, 644, 644" \
	"$NODE$HOOKS 644
$NODE$CONFIG 644
$NODE$BIN 755" sh -c "find '$NODE' -type f -exec stat -c '%n %a' {} + | LC_ALL=C sort"
hooks_file() {
	python3 -c 'import json,sys; h = json.load(open(sys.argv[1]))
print(h["hook"]["path"], h["hook"]["args"], h["stages"], sorted(h["when"]))' "$1"
}
expect "... the hooks.d file names the binary as the node sees it, for annotated containers" \
	"$BIN ['sysctl-guard', 'hook'] ['prestart', 'poststop'] ['annotations']" hooks_file "$NODE$HOOKS"
expect "... the node config is the default one, examples/node/config.json" "same" \
	sh -c "cmp -s '$SRC/examples/node/config.json' '$NODE$CONFIG' && echo same"

# inode, mtime and ctime of each file: a rename or a rewrite changes them.
files_state() {
	stat -c '%n %i %y %z' "$NODE$BIN" "$NODE$CONFIG" "$NODE$HOOKS"
}
BEFORE=$(files_state)
expect "installing again changes nothing" \
	"$BIN: up to date
$CONFIG: kept: the node has one (install never overwrites it; --config FILE replaces it)
$HOOKS: up to date
sysctl-guard $VERSION: everything under /host/ is up to date
exit 0" image_run -v "$NODE:/host"
expect "... same inodes and times" "$BEFORE" files_state

echo '{ "version": 1, "tamper": "refuse" }' >"$NODE$CONFIG"
expect_match "an operator's node config is kept" "$CONFIG: kept: the node has one" image_run -v "$NODE:/host"
expect "... as it was" '{ "version": 1, "tamper": "refuse" }' cat "$NODE$CONFIG"

INODE=$(stat -c %i "$NODE$BIN")
printf 'not the binary' >"$NODE$BIN"
expect_match "a binary that differs is replaced" "$BIN: replaced.*1 file installed" image_run -v "$NODE:/host"
expect "... by this build's, renamed over it (a new inode, never written in place)" "same
new" \
	sh -c "cmp -s '$SG' '$NODE$BIN' && echo same; [ \"\$(stat -c %i '$NODE$BIN')\" != '$INODE' ] && echo new"

# The DaemonSet's init container: the ConfigMaps' node config and profiles.
mkdir -p "$WORK/cm/config" "$WORK/cm/profiles"
echo '{ "version": 1, "baseline": "sgtest-db", "allow_inline": false }' >"$WORK/cm/config/config.json"
echo '{ "version": 1, "rules": [{ "name": "net.core.somaxconn", "access": "read-write", "range": [128, 4096] }] }' \
	>"$WORK/cm/profiles/sgtest-db.json"
DAEMONSET_INSTALL=(-v "$WORK/cm/config:/config:ro" -v "$WORK/cm/profiles:/profiles:ro" --
	install --root /host --hook always --config /config/config.json --profiles /profiles)
expect "with --config, --profiles and --hook always: the profile, the config and the hooks.d file" \
	"$BIN: up to date
/etc/sysctl-guard/profiles/sgtest-db.json: installed
$CONFIG: replaced
$HOOKS: replaced
sysctl-guard $VERSION: 3 files installed under /host/
exit 0" image_run -v "$NODE:/host" "${DAEMONSET_INSTALL[@]}"
expect "... the hooks.d file now runs the hook for every container" \
	"$BIN ['sysctl-guard', 'hook'] ['prestart', 'poststop'] ['always']" hooks_file "$NODE$HOOKS"
expect_match "... and again: up to date" "everything under /host/ is up to date" \
	image_run -v "$NODE:/host" "${DAEMONSET_INSTALL[@]}"
echo '{ "version": 1, "rules": [{ "name": "", "access": "read" }] }' >"$WORK/cm/profiles/sgtest-bad.json"
BEFORE=$(find "$NODE" -type f -exec stat -c '%n %i %y' {} + | sort)
expect_match "an invalid profile: exit 1, naming it" \
	"--profiles /profiles: /profiles/sgtest-bad.json:1:.*empty name.*exit 1$" \
	image_run -v "$NODE:/host" "${DAEMONSET_INSTALL[@]}"
expect "... and nothing is written" "$BEFORE" sh -c "find '$NODE' -type f -exec stat -c '%n %i %y' {} + | sort"
rm "$WORK/cm/profiles/sgtest-bad.json"

mkdir "$WORK/empty"
expect "--dry-run says what it would do and writes nothing" \
	"$BIN: would be installed
$CONFIG: would be installed
$HOOKS: would be installed
dry run: 3 files would change under $WORK/empty/; nothing was written" sh -c "'$SG' install --root '$WORK/empty' --dry-run; ls -A '$WORK/empty'"

# The DaemonSet's main container: gc every 600 s as the container's pid 1,
# which stops at once on the SIGTERM a pod's deletion sends.
stop_gc() {
	local id start elapsed
	id=$("${PODMAN[@]}" run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		"$IMAGE" gc --every 600 </dev/null 2>&1) || { echo "podman run -d: $id"; return; }
	sleep 0.5
	start=$(date +%s)
	"${PODMAN[@]}" stop -t 30 "$id" >/dev/null 2>&1
	elapsed=$(($(date +%s) - start))
	[ "$elapsed" -lt 10 ] && echo "stopped at once" || echo "stopped after $elapsed s"
	echo "exit $("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$id" 2>&1)"
	"${PODMAN[@]}" logs "$id" 2>&1 | tail -1
	"${PODMAN[@]}" rm -f -t 0 "$id" >/dev/null 2>&1
}
expect "gc --every as the image's pid 1 stops on SIGTERM, with status 0" "stopped at once
exit 0
gc: stopping on SIGTERM" stop_gc

# "The node": this mount namespace's /etc and /usr/local as overlays. Only
# once both are in place does anything install into /.
overlay() {
	mkdir -p "$WORK/overlay$1/upper" "$WORK/overlay$1/work" &&
		mount -t overlay overlay -o "lowerdir=$1,upperdir=$WORK/overlay$1/upper,workdir=$WORK/overlay$1/work" "$1" &&
		findmnt -n -o OPTIONS "$1" | grep -q "upperdir=$WORK/overlay$1/upper"
}
if ! overlay /etc || ! overlay /usr/local; then
	expect "overlays on /etc and /usr/local in the test's mount namespace" "mounted" echo "not mounted"
	finish
fi
# What an earlier install left on this host is not in the test's node.
rm -rf /etc/sysctl-guard "$BIN" "$HOOKS"
# The DaemonSet's hostPath volumes (DirectoryOrCreate).
mkdir -p /etc/containers /etc/sysctl-guard
expect "the image installs onto the node, with the DaemonSet's mounts" \
	"$BIN: installed
$CONFIG: installed
$HOOKS: installed
sysctl-guard $VERSION: 3 files installed under /host/
exit 0" image_run -v /usr/local:/host/usr/local -v /etc/containers:/host/etc/containers \
	-v /etc/sysctl-guard:/host/etc/sysctl-guard
# Podman reads /usr/share/containers/oci/hooks.d unless told otherwise
# (containers.conf hooks_dir; docs/operations.md).
node_run() {
	"${PODMAN[@]}" --hooks-dir /etc/containers/oci/hooks.d "${RUN[@]}" --privileged "$@" \
		--rootfs "$WORK/rootfs" sh -c "$PROBE_CMD" </dev/null 2>&1
}
expect "the installed hook guards a container: profile read-only denies the write" "Linux
sh: write error: Operation not permitted
write-denied" node_run --annotation io.sysctl-guard.profile=read-only
expect "... the default node config has no baseline: profile audit lets the write through" "Linux
write-ok" node_run --annotation io.sysctl-guard.profile=audit
expect "... without an annotation the hook does not run" "Linux
write-ok" node_run
expect "no pins left" "0" sh -c "\"$SG\" status --json 2>/dev/null | python3 -S -c 'import json,sys; print(len([g for g in json.load(sys.stdin) if g[\"container_id\"] and g[\"container_id\"] not in sys.argv[1].split()]))' \"$GUARDS_BEFORE\""
finish
