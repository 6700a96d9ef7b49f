#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, builds, runs every suite (again under ASan+UBSan,
# and in the musl build that is deployed), and ends with one line: N passed,
# M failed, K skipped.
# Usage: sudo ./test/run.sh [SUITE...]   (default: unit kernel oci fuzz vm)
# vm is the kernel matrix: the kernel suite on each supported kernel under
# qemu (test/vm/run.sh), each kernel's results counted in the summary.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD

PACKAGES="libbpf-dev libelf-dev zlib1g-dev libyajl-dev libseccomp-dev clang llvm bpftool
meson ninja-build pkg-config python3 python3-jsonschema iproute2
runc crun podman busybox-static libclang-rt-14-dev valgrind musl-dev gperf dpkg-dev make
qemu-system-x86 debhelper lintian libsystemd-dev prometheus scdoc man-db groff-base"

install_missing() {
	local missing=()
	for p in $PACKAGES; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return
	if [ "$(id -u)" != 0 ]; then
		echo "missing packages (run as root to install): ${missing[*]}" >&2
		return
	fi
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		echo "warning: apt-get could not install: ${missing[*]}" >&2
}

# setup DIR ARGS...: configures a build directory once.
setup() {
	local dir=$1
	shift
	[ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || {
		cat "$dir.setup.log"
		return 1
	}
}

PASSED=0 FAILED=0 SKIPPED=0
# run_suites DIR SUITE...: runs meson tests and adds their results to the totals.
run_suites() {
	local dir=$1 args=()
	shift
	for s in "$@"; do args+=(--suite "$s"); done
	# Policies left unused by an earlier run would be found, not made, and
	# the tables this build makes would go untested: collect them first.
	[ -x "$dir/sysctl-guard" ] && "$dir/sysctl-guard" gc --min-age 0 >/dev/null 2>&1
	meson test -C "$dir" --print-errorlogs --num-processes 2 "${args[@]}"
	count_results "$dir/meson-logs/testlog.json"
}

# count_results LOG: adds a meson JSON test log's results to the totals.
count_results() {
	local log=$1 p f s
	[ -f "$log" ] || return
	read -r p f s < <(python3 - "$log" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"): p += 1
    elif r == "SKIP": s += 1
    else: f += 1
print(p, f, s)
PY
)
	PASSED=$((PASSED + p)) FAILED=$((FAILED + f)) SKIPPED=$((SKIPPED + s))
}

# run_under_valgrind DIR TEST...: the named tests under memcheck, counted like suites.
run_under_valgrind() {
	local dir=$1
	shift
	meson test -C "$dir" --no-rebuild --print-errorlogs \
		--wrap='valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite -q' "$@"
	count_results "$dir/meson-logs/testlog-valgrind.json" # meson names the log after the wrapper
}

SUITES=("$@")
[ ${#SUITES[@]} = 0 ] && SUITES=(unit kernel oci fuzz vm)

install_missing
# What this run leaves on the node is removed at the end, if it was not there before.
PINS=/sys/fs/bpf/sysctl-guard
[ -e "$PINS" ] && PINS_BEFORE=1 || PINS_BEFORE=0
cleanup_node() {
	[ -x build/sysctl-guard ] && build/sysctl-guard gc --min-age 0 >/dev/null 2>&1
	if [ "$PINS_BEFORE" = 0 ] && [ -d "$PINS" ] && ! ls "$PINS" | grep -q '^[0-9]'; then
		rm -f "$PINS/events"
		rmdir "$PINS/policies" "$PINS/programs" "$PINS/containers" "$PINS/monitor" "$PINS" 2>/dev/null
	fi
}
trap cleanup_node EXIT
trap 'exit 143' TERM # through the EXIT trap: bash skips it on a signal
trap 'exit 130' INT
if ! { setup build && ninja -C build; }; then
	echo "build failed"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
# Only suites that exist in this tree.
EXISTING=()
for s in "${SUITES[@]}"; do
	[ "$s" = fuzz ] || [ "$s" = vm ] && continue # run below
	meson test -C build --list --suite "$s" >/dev/null 2>&1 && [ -n "$(meson test -C build --list --suite "$s" 2>/dev/null)" ] && EXISTING+=("$s")
done
[ ${#EXISTING[@]} -gt 0 ] && run_suites build "${EXISTING[@]}"

# The same suites again with ASan+UBSan: the binary the kernel and oci
# suites drive is then the sanitized one too.
if [ ${#EXISTING[@]} -gt 0 ]; then
	if setup build-asan -Db_sanitize=address,undefined -Db_lundef=false && ninja -C build-asan; then
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
			run_suites build-asan "${EXISTING[@]}"
	else
		echo "sanitizer build failed"
		FAILED=$((FAILED + 1))
	fi
fi

# The binary to deploy, linked with musl (meson.build says why), through
# the same suites; its libraries are built once, from the distribution's
# sources (build-aux/musl-deps.sh).
# Without the distribution's source packages (an offline mirror) the musl
# suites are skipped, and said so; a build that fails is a failure.
if [ ${#EXISTING[@]} -gt 0 ] || [[ " ${SUITES[*]} " == *" vm "* ]]; then
	build-aux/musl-deps.sh build-deps/musl
	deps=$?
	if [ $deps = 77 ]; then
		echo "musl build: skipped: the source packages could not be fetched"
		SKIPPED=$((SKIPPED + 1))
	elif [ $deps = 0 ] && setup build-musl --native-file build-deps/musl/native.ini &&
		ninja -C build-musl; then
		[ ${#EXISTING[@]} -gt 0 ] && run_suites build-musl "${EXISTING[@]}"
	else
		echo "musl build failed"
		FAILED=$((FAILED + 1))
	fi
fi

# The kernel matrix, with the binary that is deployed (the static musl build
# where there is one).
if [[ " ${SUITES[*]} " == *" vm "* ]]; then
	VM_BUILD=build
	[ -x build-musl/sysctl-guard ] && VM_BUILD=build-musl
	test/vm/run.sh "$VM_BUILD" | tee "$VM_BUILD/vm.log"
	read -r p f s < <(tail -n 1 "$VM_BUILD/vm.log" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
	PASSED=$((PASSED + ${p:-0})) FAILED=$((FAILED + ${f:-1})) SKIPPED=$((SKIPPED + ${s:-0}))
fi

# The unit tests under valgrind (memcheck): leaks and uninitialised reads.
if [[ " ${SUITES[*]} " == *" unit "* ]]; then
	if command -v valgrind >/dev/null; then
		# The C unit tests (build/test/unit-NAME), not the scripts that run tools.
		VALGRIND_TESTS=$(meson test -C build --list --suite unit 2>/dev/null | sed -n 's|^sysctl-guard:unit / ||p' |
			while read -r t; do [ -x "build/test/unit-$t" ] && echo "$t"; done)
		# shellcheck disable=SC2086
		run_under_valgrind build $VALGRIND_TESTS
	else
		echo "valgrind: skipped: not installed"
		SKIPPED=$((SKIPPED + 1))
	fi
fi

# fuzz: libFuzzer needs clang as the C compiler, so it gets a build of its own.
if [[ " ${SUITES[*]} " == *" fuzz "* ]]; then
	if ! command -v clang >/dev/null; then
		echo "fuzz: skipped: clang is not installed (apt-get install clang libclang-rt-14-dev)"
		SKIPPED=$((SKIPPED + 1))
	elif CC=clang setup build-fuzz -Dfuzzing=true -Db_lundef=false && ninja -C build-fuzz; then
		run_suites build-fuzz fuzz
	else
		echo "fuzz build failed"
		FAILED=$((FAILED + 1))
	fi
fi

echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" = 0 ]
