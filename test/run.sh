#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, builds, runs every suite (and the unit suite
# again under ASan+UBSan), and ends with one line: N passed, M failed, K skipped.
# Usage: sudo ./test/run.sh [SUITE...]   (default: unit kernel oci fuzz)
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD

PACKAGES="libbpf-dev libelf-dev zlib1g-dev libyajl-dev libseccomp-dev clang llvm bpftool
meson ninja-build pkg-config python3 python3-jsonschema iproute2
runc crun podman busybox-static libclang-rt-14-dev"

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
	meson test -C "$dir" --print-errorlogs --num-processes 2 "${args[@]}"
	local log="$dir/meson-logs/testlog.json"
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

SUITES=("$@")
[ ${#SUITES[@]} = 0 ] && SUITES=(unit kernel oci fuzz)

install_missing
if ! { setup build && ninja -C build; }; then
	echo "build failed"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
# Only suites that exist in this tree.
EXISTING=()
for s in "${SUITES[@]}"; do
	[ "$s" = fuzz ] && continue # built and run below, in build-fuzz
	meson test -C build --list --suite "$s" >/dev/null 2>&1 && [ -n "$(meson test -C build --list --suite "$s" 2>/dev/null)" ] && EXISTING+=("$s")
done
[ ${#EXISTING[@]} -gt 0 ] && run_suites build "${EXISTING[@]}"

if [[ " ${SUITES[*]} " == *" unit "* ]]; then
	if setup build-asan -Db_sanitize=address,undefined -Db_lundef=false && ninja -C build-asan; then
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
			run_suites build-asan unit
	else
		echo "sanitizer build failed"
		FAILED=$((FAILED + 1))
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
