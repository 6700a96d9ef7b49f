#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# values, per-field ranges, partial writes: the errno and the value read back.
. "$(dirname "$0")/lib.sh"

new_cgroup CG
P=$(policy constraints '{
  "version": 1, "default": "read",
  "rules": [
    { "name": "kernel.domainname", "access": "read-write", "values": ["alpha", "beta gamma"] },
    { "name": "net.core.somaxconn", "access": "read-write", "range": [128, 4096] },
    { "name": "net.ipv4.ip_local_port_range", "access": "read-write",
      "range": [[20000, 30000], [40000, 60999]] }
  ]}')
attach "$CG" "$P" || finish

expect "listed value with a trailing newline is allowed" "ok
ok alpha" io "$CG" --uts write kernel/domainname $'alpha\n' read kernel/domainname
expect "token lists compare by tokens" "ok
ok beta	gamma" io "$CG" --uts write kernel/domainname $'beta\tgamma' read kernel/domainname
# The kernel stores a string up to its first newline: what a newline splits
# from a listed value is not what would be stored.
expect "a newline before a listed value: denied" "EPERM" \
	io "$CG" --uts write kernel/domainname $'\nalpha'
expect "a newline inside a listed token list: denied" "EPERM" \
	io "$CG" --uts write kernel/domainname $'beta\ngamma'
expect "a write of no bytes is the empty string: not listed, denied" "EPERM" \
	io "$CG" --uts write kernel/domainname ""
expect "unlisted value is denied, value unchanged" "ok
EPERM
ok alpha" io "$CG" --uts write kernel/domainname alpha write kernel/domainname delta read kernel/domainname
expect "range: inside" "ok
ok 4096" io "$CG" --net write net/core/somaxconn $'4096\n' read net/core/somaxconn
expect "range: above max" "EPERM" io "$CG" --net write net/core/somaxconn 4097
expect "range: below min" "EPERM" io "$CG" --net write net/core/somaxconn 127
expect "range: not a number" "EPERM" io "$CG" --net write net/core/somaxconn abc
expect "range: trailing junk" "EPERM" io "$CG" --net write net/core/somaxconn 200x
expect "range: hex inside the range" "ok
ok 256" io "$CG" --net write net/core/somaxconn 0x100 read net/core/somaxconn
# Fields are read as the kernel reads them (base 0), by the program itself (sg_scan_long).
expect "range: octal inside the range" "ok
ok 128" io "$CG" --net write net/core/somaxconn 0200 read net/core/somaxconn
expect "range: octal below it" "EPERM" io "$CG" --net write net/core/somaxconn 010
expect "range: leading whitespace" "ok
ok 300" io "$CG" --net write net/core/somaxconn $' \t300' read net/core/somaxconn
expect "range: beyond 64 bits" "EPERM" io "$CG" --net write net/core/somaxconn 18446744073709551616
expect "range: negative" "EPERM" io "$CG" --net write net/core/somaxconn -200
expect "range: a bare 0x is 0 and junk" "EPERM" io "$CG" --net write net/core/somaxconn 0x
expect "per-field ranges: both inside" "ok
ok 20000	60000" io "$CG" --net write net/ipv4/ip_local_port_range "20000 60000" read net/ipv4/ip_local_port_range
expect "per-field ranges: second field outside" "EPERM" io "$CG" --net write net/ipv4/ip_local_port_range "20000 30000"
expect "per-field ranges: first field outside" "EPERM" io "$CG" --net write net/ipv4/ip_local_port_range "1024 50000"
expect "per-field ranges: a third field" "EPERM" io "$CG" --net write net/ipv4/ip_local_port_range "20000 50000 1"
expect "write at offset > 0 to a constrained rule" "EPERM" io "$CG" --net pwrite net/core/somaxconn 200 1
expect "write at offset > 0 to a values rule" "EPERM" io "$CG" --uts pwrite kernel/domainname alpha 2
expect "value longer than a constrained rule can check" "EPERM" io "$CG" --uts write kernel/domainname "$(printf 'a%.0s' $(seq 1 200))"

# Enough values that some sit past their home bucket in the values table
# (sysctl_guard.h): every one is found, and one not listed is not.
new_cgroup MANY
N=3000
P=$(policy many-values "$(python3 -c 'import json, sys
n = int(sys.argv[1])
print(json.dumps({"version": 1, "default": "read", "rules": [{"name": "kernel.domainname",
      "access": "read-write", "values": ["d%d" % i for i in range(n)]}]}))' $N)")
attach "$MANY" "$P" || finish
ARGS=()
for ((i = 0; i < N; i++)); do ARGS+=(write kernel/domainname "d$i"); done
allowed() { io "$@" | grep -cx ok; }
expect "all $N listed values are allowed" "$N" allowed "$MANY" --uts "${ARGS[@]}"
expect "a value not listed among them is denied" "EPERM" io "$MANY" --uts write kernel/domainname "d$N"
# "" in values: a write of no bytes, or of whitespace alone (what `echo >` writes).
new_cgroup EMPTY
E=$(policy empty '{ "version": 1, "default": "read",
  "rules": [{ "name": "kernel.domainname", "access": "read-write", "values": ["ok", ""] }] }')
attach "$EMPTY" "$E" || finish
expect "values [\"\"]: a write of no bytes, of a newline, of spaces: allowed; another value: denied" "ok
ok
ok
EPERM" io "$EMPTY" --uts write kernel/domainname "" write kernel/domainname $'\n' write kernel/domainname "  " write kernel/domainname x
finish
