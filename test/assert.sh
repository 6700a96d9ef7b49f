# SPDX-License-Identifier: Apache-2.0
# Assertions shared by the shell suites: each check runs a command and
# compares what it printed; finish reports and sets the exit status.

PASS=0
FAIL=0

# python3 without the site module: the tests need only the standard library,
# and a machine's site-packages may run code at every start (.pth files):
# most of a bare start on some machines, and far more under the kernel
# matrix's emulated CPU.
python3() { command python3 -S "$@"; }

skip() {
	echo "SKIP: $*"
	exit 77
}

# expect DESCRIPTION EXPECTED COMMAND...: the output must equal EXPECTED.
expect() {
	local what=$1 expected=$2 got
	shift 2
	got=$("$@" 2>&1)
	if [ "$got" = "$expected" ]; then
		PASS=$((PASS + 1))
		echo "ok: $what"
	else
		FAIL=$((FAIL + 1))
		printf 'FAIL: %s\n  expected: %s\n  got:      %s\n' "$what" \
			"$(echo "$expected" | tr '\n' '|')" "$(echo "$got" | tr '\n' '|')"
	fi
}

# expect_match DESCRIPTION REGEX COMMAND...: the output must match REGEX.
expect_match() {
	local what=$1 regex=$2 got
	shift 2
	got=$("$@" 2>&1)
	if [[ "$got" =~ $regex ]]; then
		PASS=$((PASS + 1))
		echo "ok: $what"
	else
		FAIL=$((FAIL + 1))
		printf 'FAIL: %s\n  expected to match: %s\n  got: %s\n' "$what" "$regex" \
			"$(echo "$got" | tr '\n' '|')"
	fi
}

# outside_matrix WHAT: true, but in a guest of the kernel matrix
# (test/vm/guest.sh sets SG_MATRIX), where it says so and is false: WHAT
# checks our own code rather than the kernel's (memcheck, injected faults,
# scale), which the host's run of the same test has done; emulated, it
# would take most of the matrix's time.
outside_matrix() {
	[ -z "${SG_MATRIX:-}" ] && return 0
	echo "note: $1: left to the host's run"
	return 1
}

finish() {
	echo "$PASS checks passed, $FAIL failed"
	[ "$FAIL" = 0 ]
	exit $?
}

# can_valgrind BINARY: valgrind is installed, and BINARY links glibc shared
# (memcheck sees allocations only through it; it cannot follow musl's) and is
# no sanitizer build (ASan and valgrind cannot watch one process together).
can_valgrind() {
	command -v valgrind >/dev/null && ldd "$1" 2>/dev/null | grep -q 'libc\.so\.6' &&
		! ldd "$1" 2>/dev/null | grep -q 'libasan\|libubsan'
}
