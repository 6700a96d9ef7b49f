#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The kernel matrix: boots each kernel sysctl-guard supports under qemu and
# runs the kernel suite (and runc with the hook) there, with this machine's
# root shared read-only over 9p and a tmpfs laid over it (test/vm/init).
#
#   test/vm/run.sh BUILD_DIR [KERNEL...]    (default: every kernel below)
#
# BUILD_DIR holds the binaries under test (the static build: build-musl).
# Kernels are Debian's packages, fetched with apt-get download and unpacked
# once into $SG_VM_CACHE (default /var/cache/sysctl-guard-tests), outside
# the clone, so a second run starts at once. The generic flavours are used:
# the cloud ones lack 9p.
#
# Prints, per kernel, each failing test with its output and one line
# "vm KERNEL: N passed, M failed, K skipped", then the totals in the same
# form. A kernel that cannot be unpacked or booted counts as a failure; one
# that cannot be downloaded (no package index) as a skip, and so does the
# whole matrix without qemu; each says why. Exits 1 when anything failed.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=$(cd "${1:?usage: test/vm/run.sh BUILD_DIR [KERNEL...]}" && pwd) || exit 1
shift
CACHE=${SG_VM_CACHE:-/var/cache/sysctl-guard-tests}
LOGS=$BUILD/vm-logs

# KERNEL PACKAGE REWRITE: REWRITE says whether bpf_sysctl_set_new_value()
# takes effect there, as a program rewriting a write of kernel.domainname
# showed on each; test_rewrite holds the hook's probe to it.
MATRIX="
6.1.170    linux-image-6.1.0-47-amd64-unsigned         ignored
6.1.176-rt linux-image-6.1.0-50-rt-amd64-unsigned      ignored
6.1.192    linux-image-6.1.0-57-amd64-unsigned         works
6.12.111   linux-image-6.12.111+deb12-amd64-unsigned   works
"
# What the guest needs of the kernel's modules, with what they need.
MODULES="virtio_pci 9pnet_virtio 9p overlay veth"

# The kernel suite, as meson runs it (test/meson.build), and runc with the
# hook. Five tests of the project's own bookkeeping (injected faults,
# preload's marks, gc, reuse by inputs, metrics) use the kernel only as the
# others do; they run on the host's kernel (three times), and here with
# SG_VM_TESTS=all: they would add half again to the matrix's time, and a
# fresh clone's run of test/run.sh is to stay under 25 minutes.
ALL_TESTS="kernel/access kernel/constraints kernel/rewrite kernel/lifecycle kernel/differential kernel/tamper kernel/hook kernel/layers kernel/namespaces oci/runc kernel/faults kernel/reuse kernel/preload kernel/gc kernel/metrics"
TESTS=${SG_VM_TESTS:-"kernel/access kernel/constraints kernel/rewrite kernel/lifecycle kernel/differential kernel/tamper kernel/hook kernel/layers kernel/namespaces oci/runc"}
[ "$TESTS" = all ] && TESTS=$ALL_TESTS

die() {
	echo "vm: $*" >&2
	exit 1
}

# fetch KERNEL PACKAGE: unpacks the kernel and the modules the guest needs
# into $CACHE/PACKAGE (vmlinuz, modules/, modules/order); prints that path.
fetch() {
	local kernel=$1 pkg=$2 dir=$CACHE/$2 tmp
	if [ -f "$dir/.complete" ]; then
		echo "$dir"
		return 0
	fi
	mkdir -p "$CACHE" || return 1
	tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX") || return 1
	# apt-get download writes as _apt where it can: give it the directory.
	chmod 777 "$tmp"
	# A machine whose package lists are older than the archive: update once.
	if ! (cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1) &&
		! (apt-get update -qq >/dev/null 2>&1 && cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1); then
		rm -rf "$tmp"
		echo "vm $kernel: cannot download $pkg (apt-get download)" >&2
		return 77
	fi
	dpkg-deb -x "$tmp"/*.deb "$tmp/x" && unpack_modules "$tmp/x" "$tmp/out" &&
		cp "$tmp"/x/boot/vmlinuz-* "$tmp/out/vmlinuz" || {
		rm -rf "$tmp"
		echo "vm $kernel: cannot unpack $pkg" >&2
		return 1
	}
	rm -rf "$dir"
	mv "$tmp/out" "$dir" && rm -rf "$tmp" && touch "$dir/.complete" && echo "$dir"
}

# unpack_modules ROOTFS OUT: copies $MODULES and what they depend on,
# decompressed, into OUT/modules, and their load order into OUT/modules/order.
unpack_modules() {
	local rootfs=$1 out=$2 mods
	mods=$(echo "$rootfs"/lib/modules/*)
	mkdir -p "$out/modules"
	python3 - "$mods" "$out/modules" $MODULES <<'PY' || return 1
import lzma, os, sys
mods, out, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
def key(filename):
    return filename.split(".ko")[0].replace("-", "_")
files = {key(f): os.path.join(d, f)
         for d, _, fs in os.walk(os.path.join(mods, "kernel")) for f in fs if ".ko" in f}
builtin = {key(os.path.basename(l.strip())) for l in open(os.path.join(mods, "modules.builtin"))}
def read(name):
    path = files[name]
    with (lzma.open if path.endswith(".xz") else open)(path, "rb") as f:
        return f.read()
def depends(image):
    # the module's .modinfo strings: "depends=a,b" (no depmod needed)
    for field in image.split(b"\0"):
        if field.startswith(b"depends="):
            return [key(d) for d in field[8:].decode().split(",") if d]
    return []
order = []
def add(name):
    if name in builtin or name in order:
        return
    if name not in files:
        sys.exit(f"module {name} is neither built in nor shipped")
    image = read(name)
    for d in depends(image):
        add(d)
    with open(os.path.join(out, name + ".ko"), "wb") as f:
        f.write(image)
    order.append(name)
for name in wanted:
    add(name)
with open(os.path.join(out, "order"), "w") as f:
    f.writelines(n + ".ko\n" for n in order)
PY
}

# initramfs KDIR COMMAND OUT: busybox, test/vm/init, the modules and COMMAND.
initramfs() {
	local kdir=$1 command=$2 out=$3 tree
	tree=$(mktemp -d) || return 1
	mkdir -p "$tree/bin" "$tree/proc" "$tree/sys" "$tree/dev" "$tree/modules"
	cp /bin/busybox "$tree/bin/busybox" &&
		cp "$ROOT/test/vm/init" "$tree/init" &&
		cp "$kdir"/modules/* "$tree/modules/" &&
		printf '%s\n' "$command" >"$tree/command" &&
		(cd "$tree" && set -o pipefail && find . | busybox cpio -o -H newc -R 0:0 2>/dev/null | gzip -1) >"$out"
	local r=$?
	rm -rf "$tree"
	return $r
}

# boot KDIR COMMAND LOG: runs COMMAND as root in a guest of kernel KDIR;
# the console goes to LOG. Fails when the guest did not report its end.
boot() {
	local kdir=$1 command=$2 log=$3 initrd
	initrd=$(mktemp /tmp/sg-vm-initrd.XXXXXX) || return 1
	initramfs "$kdir" "$command" "$initrd" || {
		rm -f "$initrd"
		return 1
	}
	timeout 1500 qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m 1536 \
		-nographic -no-reboot -monitor none -serial stdio \
		-kernel "$kdir/vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off" \
		-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
		</dev/null >"$log" 2>&1
	rm -f "$initrd"
	tr -d '\r' <"$log" >"$log.txt" && mv "$log.txt" "$log"
	grep -q '^sg-vm: exit ' "$log"
}

# guest_command KERNEL REWRITE: what the guest runs (test/vm/guest.sh).
guest_command() {
	[ -n "${SG_VM_COMMAND:-}" ] && { echo "$SG_VM_COMMAND"; return; }
	printf 'cd %q && SG_VM_KERNEL=%q SG_VM_REWRITE=%q test/vm/guest.sh %q %s' \
		"$ROOT" "$1" "$2" "$BUILD" "$TESTS"
}

# run_kernel KERNEL KDIR REWRITE: boots it, runs the tests; prints each
# failure with its output and, last, "vm KERNEL: N passed, M failed, K skipped".
run_kernel() {
	local kernel=$1 kdir=$2 rewrite=$3 log=$LOGS/$1.log p=0 f=0 s=0 start=$SECONDS name result secs
	boot "$kdir" "$(guest_command "$kernel" "$rewrite")" "$log" ||
		echo "vm $kernel: the guest did not finish (timed out or crashed)"
	while read -r _ _ name result secs; do
		case $result in
		0) p=$((p + 1)) ;;
		77)
			s=$((s + 1))
			echo "vm $kernel: skip $name: $(test_output "$name" "$log" | grep -m1 'SKIP:')"
			;;
		*)
			f=$((f + 1))
			echo "vm $kernel: FAIL $name (exit $result, $secs s):"
			test_output "$name" "$log" | sed 's/^/    /'
			;;
		esac
	done < <(grep '^sg-vm: result ' "$log")
	# A test the guest never reported (it stopped early) is a failure.
	local missing=$(($(wc -w <<<"$TESTS") - p - f - s))
	if [ "$missing" -gt 0 ]; then
		echo "vm $kernel: $missing tests did not run; the end of the console:"
		tail -n 20 "$log" | sed 's/^/    /'
		f=$((f + missing))
	fi
	echo "vm $kernel: $p passed, $f failed, $s skipped ($((SECONDS - start)) s; console: $log)"
}

# test_output NAME LOG: what test NAME printed in the guest.
test_output() {
	sed -n "\\%^sg-vm: begin $1\$%,\\%^sg-vm: result $1 %p" "$2"
}

command -v qemu-system-x86_64 >/dev/null || {
	echo "vm: skipped: qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
}
[ -x "$BUILD/sysctl-guard" ] || die "$BUILD/sysctl-guard is not built"
mkdir -p "$LOGS"

# Fetched one after another, booted $SG_VM_JOBS at a time (TCG runs a guest
# CPU on a host thread).
PASSED=0 FAILED=0 SKIPPED=0
JOBS=${SG_VM_JOBS:-$(nproc)}
WANTED=("$@")
RAN=()
while read -r kernel pkg rewrite; do
	[ -n "$kernel" ] || continue
	if [ ${#WANTED[@]} -gt 0 ] && [[ " ${WANTED[*]} " != *" $kernel "* ]]; then
		continue
	fi
	kdir=$(fetch "$kernel" "$pkg")
	case $? in
	0) ;;
	77)
		echo "vm $kernel: 0 passed, 0 failed, 1 skipped (the kernel could not be downloaded)" >"$LOGS/$kernel.report"
		RAN+=("$kernel")
		continue
		;;
	*)
		echo "vm $kernel: 0 passed, 1 failed, 0 skipped (the kernel could not be unpacked)" >"$LOGS/$kernel.report"
		RAN+=("$kernel")
		continue
		;;
	esac
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	run_kernel "$kernel" "$kdir" "$rewrite" >"$LOGS/$kernel.report" 2>&1 &
	RAN+=("$kernel")
done <<<"$MATRIX"
wait

for kernel in "${RAN[@]}"; do
	cat "$LOGS/$kernel.report"
	read -r p f s < <(tail -n 1 "$LOGS/$kernel.report" | sed -E 's/^vm [^:]*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')
	PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
done
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" = 0 ]
