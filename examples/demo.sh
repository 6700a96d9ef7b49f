#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sysctl-guard in one run: real runc containers, started with the hook in
# their config.json, try to read and write /proc/sys. Run as root:
#
#   sudo ./examples/demo.sh
#
# It installs what is missing (Debian packages), builds, makes a busybox
# rootfs, and prints what each container saw.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD

[ "$(id -u)" = 0 ] || { echo "run as root: sudo $0" >&2; exit 1; }

NEED="libbpf-dev libelf-dev zlib1g-dev libyajl-dev libseccomp-dev clang llvm bpftool meson ninja-build pkg-config python3 runc busybox-static"
MISSING=$(for p in $NEED; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$MISSING" ]; then
	echo "== installing: $MISSING"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $MISSING >/dev/null
fi

echo "== building"
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
SG=$ROOT/build/sysctl-guard

. "$ROOT/test/oci/bundle.sh"
WORK=$(mktemp -d /tmp/sysctl-guard-demo.XXXXXX)
CONTAINERS=()
cleanup() {
	for c in "${CONTAINERS[@]}"; do runc delete --force "$c" >/dev/null 2>&1 || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # through the EXIT trap: bash skips it on a signal
make_rootfs "$WORK/rootfs"

POLICY='{"version":1,"default":"read","rules":[
  {"name":"kernel.domainname","access":"read"},
  {"name":"net.core.somaxconn","access":"read-write","range":[128,4096],"on_violation":"clamp"}]}'

# The workload: one line per access, saying what the container observed.
SCRIPT='
echo "read  kernel.ostype         -> $(cat /proc/sys/kernel/ostype)"
if err=$( (echo evil.example > /proc/sys/kernel/domainname) 2>&1 ); then
  echo "write kernel.domainname     -> ok, now $(cat /proc/sys/kernel/domainname)"
else
  echo "write kernel.domainname     -> ${err##*: }"
fi
echo 65535 > /proc/sys/net/core/somaxconn
echo "write net.core.somaxconn=65535 -> reads back $(cat /proc/sys/net/core/somaxconn)"
'
ARGS=$(python3 -c 'import json,sys; print(json.dumps(["sh", "-c", sys.argv[1]]))' "$SCRIPT")
ANNOTATIONS=$(python3 -c 'import json,sys; print(json.dumps({"io.sysctl-guard.policy": sys.argv[1]}))' "$POLICY")

run() {
	local name=$1 stage=$2 annotations=$3
	make_bundle "$WORK/$name" "$WORK/rootfs" "$SG" "$stage" "$annotations" "$ARGS"
	CONTAINERS+=("$name")
	runc run --bundle "$WORK/$name" "$name" </dev/null
}

echo
echo "== policy (annotation io.sysctl-guard.policy):"
echo "$POLICY" | sed 's/^/   /'
echo
echo "== guarded container (hook at createRuntime):"
run sg-demo-guarded createRuntime "$ANNOTATIONS" | sed 's/^/   /'
echo
echo "== unguarded container, same workload, no hook:"
run sg-demo-plain none '{}' | sed 's/^/   /'
echo
echo "== explain, without a container:"
echo "$POLICY" >"$WORK/policy.json"
"$SG" explain "$WORK/policy.json" net.core.somaxconn --write 65535 | sed 's/^/   /'
echo
echo "Every container ran in its own UTS and network namespace: the host's sysctls were not touched."
