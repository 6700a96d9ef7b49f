#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Access levels and defaults, as a process in the guarded cgroup sees them.
. "$(dirname "$0")/lib.sh"

new_cgroup CG
P=$(policy access '{
  "version": 1, "default": "read",
  "rules": [
    { "name": "kernel.domainname", "access": "read-write" },
    { "name": "kernel.hostname", "access": "read" },
    { "name": "kernel.random.*", "access": "none" }
  ]}')
attach "$CG" "$P" || finish

expect "read-write rule allows a write" "ok
ok guarded.example" io "$CG" --uts write kernel/domainname guarded.example read kernel/domainname
expect "read rule denies a write" "EPERM" io "$CG" --uts write kernel/hostname nope
expect "read rule allows a read" "ok $(cat /proc/sys/kernel/hostname)" io "$CG" --uts read kernel/hostname
expect "none pattern denies a read" "EPERM" io "$CG" read kernel/random/boot_id
expect "none pattern denies a 1-byte read" "EPERM" io "$CG" read1 kernel/random/uuid
expect "default read allows a read" "ok $(cat /proc/sys/kernel/ostype)" io "$CG" read kernel/ostype
expect "default read allows 1-byte reads" "ok $(cat /proc/sys/kernel/ostype)" io "$CG" read1 kernel/ostype
expect "default read denies a write" "EPERM" io "$CG" --net write net/core/somaxconn 1024
expect "outside the cgroup nothing is denied" "ok" "$SG_IO" --net write net/core/somaxconn 1024

new_cgroup CG2
P2=$(policy none '{ "version": 1, "default": "none",
  "rules": [ { "name": "kernel.ostype", "access": "read" },
             { "name": "net.core.somaxconn", "access": "read-write" } ] }')
attach "$CG2" "$P2" || finish
expect "default none denies a read" "EPERM" io "$CG2" read kernel/osrelease
expect "exact rule beats the default" "ok Linux" io "$CG2" read kernel/ostype
expect "read-write rule allows a write in a netns" "ok
ok 1000" io "$CG2" --net write net/core/somaxconn 1000 read net/core/somaxconn

new_cgroup CG3
P3=$(policy rw '{ "version": 1, "default": "read-write", "rules": [
  { "name": "kernel.**", "access": "read" } ] }')
attach "$CG3" "$P3" || finish
expect "** pattern denies a write below it" "EPERM" io "$CG3" --uts write kernel/domainname x
expect "default read-write allows a write elsewhere" "ok" io "$CG3" --net write net/core/somaxconn 2000
# A dot inside a component: the VLAN-style device d0.5 (a veth here), whose
# sysctls the kernel names net/ipv4/conf/d0.5/..., written d0/5 in dotted form.
new_cgroup CG4
P4=$(policy dotted '{ "version": 1, "default": "read", "rules": [
  { "name": "net.ipv4.conf.d0/5.*", "access": "none" },
  { "name": "net.ipv4.conf.p0.forwarding", "access": "read-write" } ] }')
attach "$CG4" "$P4" || finish
expect "d0/5 pattern denies reading net/ipv4/conf/d0.5/rp_filter; d0 and p0 unaffected" "EPERM
ok
ok 0" io "$CG4" --net sh "ip link add d0.5 type veth peer name p0" \
	read net/ipv4/conf/d0.5/rp_filter write net/ipv4/conf/p0/forwarding 1 read net/ipv4/conf/lo/forwarding
finish
