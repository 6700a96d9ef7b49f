#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# schema/policy.schema.json and `sysctl-guard check` must agree on every policy
# the project ships or tests with:
#   test/fixtures/policies/valid/             both accept
#   test/fixtures/policies/invalid/           both reject (one fault the schema can express);
#                                             check's message contains NAME.expect
#   test/fixtures/policies/invalid-semantic/  check rejects (the schema cannot say why:
#                                             inverted ranges, byte lengths, 1.0 for 1,
#                                             JSON-level faults); message contains NAME.expect
#   examples/policies/, hook/profiles/        both accept, and check warns about nothing
#   one-rule policies for tricky names        both accept or both reject (the name
#                                             syntax of name.h is in the schema's regex)
#
# Usage: schema_agree.sh SYSCTL_GUARD SOURCE_ROOT
# Prints one line per file; exits 1 when anything disagrees, 77 when python3's
# jsonschema module (Debian: python3-jsonschema) is missing.
set -u

SG=${1:?usage: schema_agree.sh SYSCTL_GUARD SOURCE_ROOT}
ROOT=${2:?usage: schema_agree.sh SYSCTL_GUARD SOURCE_ROOT}
SCHEMA=$ROOT/schema/policy.schema.json
FIX=$ROOT/test/fixtures/policies
export LC_ALL=C

if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 is not installed (apt-get install python3 python3-jsonschema)"
	exit 77
fi
if ! python3 -c 'from jsonschema import Draft202012Validator' 2>/dev/null; then
	echo "SKIP: python3 has no jsonschema with Draft 2020-12 support (apt-get install python3-jsonschema)"
	exit 77
fi
if [ ! -x "$SG" ]; then
	echo "FAIL: $SG is not an executable"
	exit 1
fi

tmp=$(mktemp -d /tmp/sg-schema-agree.XXXXXX) || exit 1
trap 'rm -rf -- "$tmp"' EXIT
trap 'exit 143' TERM # through the EXIT trap: bash skips it on a signal

# Every file, tagged with what both sides must say about it.
: >"$tmp/list"
for kind in valid invalid invalid-semantic; do
	n=0
	for f in "$FIX/$kind"/*.json; do
		[ -e "$f" ] || continue
		printf '%s\t%s\n' "$kind" "$f" >>"$tmp/list"
		n=$((n + 1))
	done
	if [ "$n" -eq 0 ]; then
		echo "FAIL: no fixtures in $FIX/$kind"
		exit 1
	fi
done
for f in "$ROOT"/examples/policies/*.json "$ROOT"/hook/profiles/*.json; do
	[ -e "$f" ] || continue
	printf 'shipped\t%s\n' "$f" >>"$tmp/list"
done

# Names at the edges of the syntax, each in a policy of its own. Names longer
# than 127 bytes but not 127 characters are left out: the schema cannot count
# bytes (invalid-semantic/name-too-long-bytes.json).
mkdir "$tmp/names" || exit 1
python3 - "$tmp/names" >>"$tmp/list" <<'EOF' || exit 1
import json
import os
import sys

names = [
    "net.ipv4.tcp_rmem", "net/ipv4/tcp_rmem", "kernel", "*", "?", "**", "**.x", "x.**",
    "net.ipv4.conf.eth0/100.rp_filter", "net/ipv4/conf/eth0.100/rp_filter",
    "net.**.rp_filter", "net/**/rp_filter", "kernel.sched_*", "a.*/*.b", "net.eth?.x",
    "a/.b", "a/..b", "a/...", "a/.x./y", "caf\u00e9.x", "x" * 127,
    "", "kernel.", ".kernel", "kernel..x", "kernel//x", "kernel/", "/kernel", "kernel./x",
    "a./.b", "a.//.b", "a/./b", "a/../b", "a/.", "a/..", "net.**x", "net.x**", "net.***",
    "a/**b/c", "a.**/.b", "a b", "a\tb", "a\nb", "a\u007fb", "a\u0001b", "net.x\n",
    "/proc/sys/net/core/somaxconn", "/proc/sys/", "x" * 128,
]
for i, name in enumerate(names):
    path = os.path.join(sys.argv[1], f"name-{i:02d}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"version": 1, "rules": [{"name": name, "access": "read"}]}, f)
    print(f"name\t{path}")
EOF

# The schema's verdict on every file, one line each: KIND TAB PATH TAB VERDICT TAB DETAIL.
# VERDICT: accept, reject (the schema says no) or notjson (strict JSON parsing failed:
# invalid UTF-8, duplicate keys, NaN, syntax), which the schema cannot judge.
python3 - "$SCHEMA" "$tmp/list" >"$tmp/schema" <<'EOF' || exit 1
import json
import sys

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

schema_path, list_path = sys.argv[1], sys.argv[2]
try:
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
except (OSError, ValueError, SchemaError) as e:
    print(f"FAIL: {schema_path} is not a valid JSON Schema 2020-12: {e}", file=sys.stderr)
    sys.exit(1)
validator = Draft202012Validator(schema)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ValueError(f"duplicate key {sorted(dup)[0]!r}")
    return dict(pairs)


def no_constant(name):
    raise ValueError(f"{name} is not JSON")


def clean(s):
    return " ".join(str(s).split())


with open(list_path, encoding="utf-8") as f:
    entries = [line.rstrip("\n").split("\t", 1) for line in f if line.strip()]
for kind, path in entries:
    try:
        with open(path, "rb") as f:
            raw = f.read()
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates,
                         parse_constant=no_constant)
    except (OSError, ValueError) as e:
        print(f"{kind}\t{path}\tnotjson\t{clean(e)}")
        continue
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        print(f"{kind}\t{path}\treject\t{where}: {clean(e.message)[:160]}")
    else:
        print(f"{kind}\t{path}\taccept\t")
EOF

pass=0
fail=0
tab=$(printf '\t')
while IFS="$tab" read -r kind path verdict detail; do
	name=${path#"$ROOT"/}
	"$SG" check "$path" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	msg=$(head -n 1 "$tmp/err")
	problem=""
	note=""
	if [ "$rc" -gt 1 ]; then
		problem="check exited $rc (expected 0 or 1): $msg"
	else
		case $kind in
		valid | shipped)
			if [ "$verdict" != accept ]; then
				problem="the schema rejects it ($verdict: $detail)"
			elif [ "$rc" -ne 0 ]; then
				problem="check rejects it: $msg"
			elif [ "$kind" = shipped ] && grep -q '^warning:' "$tmp/err"; then
				problem="check warns: $(grep '^warning:' "$tmp/err" | head -n 1)"
			elif [ "${path##*/}" = shadowed-rule.json ] &&
				! grep -q '^warning: .*rules\[1\]: never matches' "$tmp/err"; then
				problem="check does not warn that rules[1] never matches"
			fi
			note="accepted by both"
			;;
		invalid)
			if [ "$verdict" = notjson ]; then
				problem="not strict JSON ($detail); JSON-level faults belong in invalid-semantic/"
			elif [ "$verdict" != reject ]; then
				problem="the schema accepts it"
			elif [ "$rc" -ne 1 ]; then
				problem="check accepts it"
			fi
			note="rejected by both (schema: $detail)"
			;;
		invalid-semantic)
			if [ "$rc" -ne 1 ]; then
				problem="check accepts it"
			fi
			note="rejected by check (schema: $verdict)"
			;;
		name)
			name="name $(sed 's/.*"name": \("[^]]*"\), "access".*/\1/' "$path" | cut -c 1-48)"
			if [ "$verdict" = accept ] && [ "$rc" -ne 0 ]; then
				problem="the schema accepts it, check rejects it: $msg"
			elif [ "$verdict" != accept ] && [ "$rc" -eq 0 ]; then
				problem="check accepts it, the schema does not ($detail)"
			fi
			note="$([ "$rc" -eq 0 ] && echo accepted || echo rejected) by both"
			;;
		esac
		if [ -z "$problem" ] && [ "$kind" != valid ] && [ "$kind" != shipped ] &&
			[ "$kind" != name ]; then
			expect_file=${path%.json}.expect
			if [ ! -s "$expect_file" ]; then
				problem="missing ${expect_file#"$ROOT"/}"
			else
				expect=$(head -n 1 "$expect_file")
				if ! grep -qF -- "$expect" "$tmp/err"; then
					problem="check's message does not contain the .expect line
    got:      $msg
    expected: $expect"
				fi
			fi
		fi
	fi
	if [ -n "$problem" ]; then
		printf 'FAIL %s: %s\n' "$name" "$problem"
		fail=$((fail + 1))
	else
		printf 'ok   %s: %s\n' "$name" "$note"
		pass=$((pass + 1))
	fi
done <"$tmp/schema"

total=$(wc -l <"$tmp/list")
if [ $((pass + fail)) -ne "$total" ]; then
	echo "FAIL: judged $((pass + fail)) of $total files"
	exit 1
fi
echo "$pass agree, $fail disagree"
[ "$fail" -eq 0 ]
