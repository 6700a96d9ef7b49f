#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# man(1) renders every generated man page without a warning: at 80 columns,
# in the C and the C.UTF-8 locale, with all of groff's warnings on
# (`man --warnings=w`, which man-db passes to groff as -ww; they come out on
# stderr). First it renders a page with a known fault, so that a man(1) that
# does not report warnings here makes the test skip rather than pass.
#
# Usage: man_render.sh PAGE... | man_render.sh '' REASON
# An empty PAGE means the pages were not built: the test skips (77) with
# REASON. It also skips where man(1) is missing (Debian: man-db, groff-base).
set -u

if [ "${1-}" = "" ]; then
	echo "SKIP: ${2:-the man pages are not built}"
	exit 77
fi
if ! command -v man >/dev/null 2>&1; then
	echo "SKIP: man(1) is not installed (apt-get install man-db groff-base)"
	exit 77
fi

tmp=$(mktemp -d /tmp/sg-man-render.XXXXXX) || exit 1
trap 'rm -rf -- "$tmp"' EXIT
trap 'exit 143' TERM # through the EXIT trap: bash skips it on a signal

# render LOCALE PAGE: the page's text in $tmp/out, man's stderr in $tmp/err; man's status.
render() {
	env -i PATH="$PATH" LC_ALL="$1" MANWIDTH=80 \
		man --warnings=w -l -P cat "$2" >"$tmp/out" 2>"$tmp/err"
}

printf '.TH T 8\n.SH NAME\nt \\- a page with a fault\n.XYZZY\n' >"$tmp/bad.8"
render C "$tmp/bad.8"
if ! grep -q "warning" "$tmp/err"; then
	echo "SKIP: man --warnings=w reports no groff warning for an undefined macro here: it cannot check the pages"
	exit 77
fi

fail=0
for page in "$@"; do
	name=${page##*/}
	if [ ! -f "$page" ]; then
		echo "FAIL $name: $page is not there: the build should have made it"
		fail=$((fail + 1))
		continue
	fi
	for locale in C C.UTF-8; do
		render "$locale" "$page"
		rc=$?
		if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ]; then
			echo "FAIL $name ($locale): man exited $rc; stderr:"
			sed 's/^/    /' "$tmp/err"
			fail=$((fail + 1))
		elif ! grep -q '^NAME' "$tmp/out" || [ "$(wc -l <"$tmp/out")" -lt 20 ]; then
			echo "FAIL $name ($locale): rendered to $(wc -l <"$tmp/out") lines without a NAME section"
			fail=$((fail + 1))
		else
			echo "ok   $name ($locale): $(wc -l <"$tmp/out") lines, no warnings"
		fi
	done
done
[ "$fail" -eq 0 ]
