#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the node image of sysctl-guard with Podman, offline: FROM scratch,
# nothing in it but the static binary, which installs itself on the node
# (`sysctl-guard install --root /host`, the image's default command) and is
# the DaemonSet's long-running `gc` too (daemonset.yaml).
#
#   examples/kubernetes/image.sh [--binary FILE] [--tag REF] [-- PODMAN_OPTION...]
#
# --binary FILE: the binary to put in the image; by default the musl build's
#   (build-musl/sysctl-guard), else the glibc one (build/sysctl-guard). It
#   must be linked statically: an image from scratch has no libc.
# --tag REF: the image's reference; by default localhost/sysctl-guard:VERSION,
#   VERSION being meson.build's project version, which the binary must report.
# PODMAN_OPTIONs go before `build` (--root DIR --runroot DIR: another store).
#
# Podman's own output goes to stderr; the last line on stdout is the image's
# reference. Push it where the nodes pull from (podman push REF REGISTRY/...).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BINARY=
TAG=
PODMAN_OPTIONS=()

die() {
	echo "image.sh: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--binary) BINARY=${2:?--binary takes a FILE}; shift 2 ;;
	--tag) TAG=${2:?--tag takes an image reference}; shift 2 ;;
	--) shift; PODMAN_OPTIONS=("$@"); break ;;
	-h | --help) sed -n '3,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) die "unknown argument \"$1\"; see $0 --help" ;;
	esac
done

command -v podman >/dev/null || die "podman is not installed: apt-get install podman"
if [ -z "$BINARY" ]; then
	for candidate in "$SRC/build-musl/sysctl-guard" "$SRC/build/sysctl-guard"; do
		[ -x "$candidate" ] && { BINARY=$candidate; break; }
	done
	[ -n "$BINARY" ] || die "no binary: build one first (README.md, \"Building for nodes\") or give --binary FILE"
fi
[ -f "$BINARY" ] && [ -x "$BINARY" ] || die "$BINARY: not an executable file"

# A dynamic binary would start in the image only to fail for want of its
# loader: refuse it here, where the cause is plain.
command -v file >/dev/null || die "file is not installed (apt-get install file): needed to check that $BINARY is static"
LINKAGE=$(file -bL "$BINARY")
case $LINKAGE in
*"statically linked"* | *"static-pie linked"*) ;;
*) die "$BINARY is not linked statically ($LINKAGE): an image from scratch has no libc. Build the musl binary (README.md, \"Building for nodes\"), or the glibc one where static libraries are installed (meson setup -Dstatic-binary=enabled)" ;;
esac

VERSION=$(sed -n "s/^  version: '\([^']*\)',\$/\1/p" "$SRC/meson.build" | head -1)
[ -n "$VERSION" ] || die "no project version in $SRC/meson.build"
REPORTED=$("$BINARY" --version 2>&1) || die "$BINARY --version failed: $REPORTED"
# "sysctl-guard VERSION (FEATURES)": the version is the second word.
[ "${REPORTED%% (*}" = "sysctl-guard $VERSION" ] ||
	die "$BINARY says \"$REPORTED\", but meson.build is at $VERSION: rebuild it"
TAG=${TAG:-localhost/sysctl-guard:$VERSION}

CONTEXT=$(mktemp -d /tmp/sysctl-guard-image.XXXXXX)
trap 'rm -rf "$CONTEXT"' EXIT
cp "$BINARY" "$CONTEXT/sysctl-guard"
# The binary has the path it has on nodes (the hooks.d file names it there).
cat >"$CONTEXT/Containerfile" <<EOF
FROM scratch
COPY sysctl-guard /usr/local/sbin/sysctl-guard
LABEL org.opencontainers.image.title="sysctl-guard" \\
      org.opencontainers.image.description="OCI runtime hook confining /proc/sys; installs itself on a node with: install --root /host" \\
      org.opencontainers.image.version="$VERSION" \\
      org.opencontainers.image.licenses="Apache-2.0 AND (GPL-2.0-only OR BSD-2-Clause)"
ENTRYPOINT ["/usr/local/sbin/sysctl-guard"]
CMD ["install", "--root", "/host"]
EOF

# The same binary gives the same image: its time is the commit's, not now.
STAMP=$(git -C "$SRC" log -1 --format=%ct 2>/dev/null || echo 0)
podman "${PODMAN_OPTIONS[@]}" build --pull=never --network none --timestamp "$STAMP" \
	--tag "$TAG" "$CONTEXT" >&2
echo "$TAG"
