#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a realistic benchmark policy of exactly N rules.

    gen_policy.py N OUT [--only read|write] [--nonce TEXT]

Every policy has rules deciding the two names the benchmark accesses,
kernel.ostype (read) and net.core.somaxconn (read-write, range), unless
--only keeps one of them (a 1-rule policy). The rest look like what people
write for many interfaces: nine in ten exact per-device names (some VLAN
devices, whose dot is written '/', some with allowed values or ranges), one
in ten patterns with '*', '?' and '**'. --nonce adds a rule no other policy
has, so the policy's hash is new (a policy "seen for the first time").
"""
import json
import sys

IPV4_CONF = ["rp_filter", "forwarding", "accept_redirects", "send_redirects", "arp_ignore",
             "arp_announce", "log_martians", "accept_source_route", "proxy_arp",
             "secure_redirects", "arp_filter", "route_localnet"]
IPV6_CONF = ["accept_ra", "forwarding", "disable_ipv6", "autoconf", "hop_limit", "mtu",
             "accept_dad", "use_tempaddr", "proxy_ndp"]
NEIGH = ["gc_stale_time", "base_reachable_time_ms", "retrans_time_ms", "ucast_solicit",
         "mcast_solicit", "app_solicit"]
K8S_SAFE = ["kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
            "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
            "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
            "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
            "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"]

READ_RULE = {"name": "kernel.ostype", "access": "read"}
WRITE_RULE = {"name": "net.core.somaxconn", "access": "read-write", "range": [128, 65535]}


def exact(i):
    dev = i // 4
    kind = i % 4
    if kind == 0:
        rule = {"name": f"net.ipv4.conf.eth{dev}.{IPV4_CONF[dev % len(IPV4_CONF)]}",
                "access": "read-write", "values": ["0", "1", "2"]}
    elif kind == 1:
        rule = {"name": f"net.ipv6.conf.veth{dev}.{IPV6_CONF[dev % len(IPV6_CONF)]}",
                "access": "read"}
    elif kind == 2:
        rule = {"name": f"net.ipv4.neigh.eth{dev}.{NEIGH[dev % len(NEIGH)]}",
                "access": "read-write", "range": [0, 1000000]}
    else:  # a VLAN device eth<N>.<M>: its dot is '/' in dotted form
        rule = {"name": f"net.ipv4.conf.eth{dev % 64}/{dev}.{IPV4_CONF[(dev + 3) % len(IPV4_CONF)]}",
                "access": "none"}
    return rule


def pattern(j):
    k = j // 5
    kind = j % 5
    if kind == 0:
        return {"name": f"net.ipv4.conf.eth{k}*.{IPV4_CONF[k % len(IPV4_CONF)]}", "access": "read"}
    if kind == 1:
        return {"name": f"net.ipv6.conf.veth{k}?.{IPV6_CONF[k % len(IPV6_CONF)]}", "access": "read"}
    if kind == 2:
        return {"name": f"net.**.br{k}.{IPV4_CONF[(k + 5) % len(IPV4_CONF)]}", "access": "none"}
    if kind == 3:
        return {"name": f"net.ipv4.neigh.vlan{k}/*.{NEIGH[k % len(NEIGH)]}", "access": "read"}
    return {"name": f"net.ipv6.neigh.*.{NEIGH[k % len(NEIGH)]}_{k}", "access": "read"}


def build(n, only=None, nonce=None):
    rules = []
    if only in (None, "read"):
        rules.append(READ_RULE)
    if only in (None, "write"):
        rules.append(WRITE_RULE)
    if nonce is not None and len(rules) < n:
        rules.append({"name": f"net.ipv4.conf.bench{nonce}.rp_filter", "access": "read"})
    # Small policies: the Kubernetes safe sysctls and a classic deny first.
    for name in K8S_SAFE:
        if len(rules) >= n:
            break
        rules.append({"name": name, "access": "read-write"})
    if len(rules) < n:
        rules.append({"name": "kernel.random.*", "access": "none"})
    i = j = 0
    while len(rules) < n:
        if len(rules) % 10 == 9:
            rules.append(pattern(j))
            j += 1
        else:
            rules.append(exact(i))
            i += 1
    return {"version": 1, "mode": "enforce", "default": "read", "rules": rules[:n]}


def main():
    args = sys.argv[1:]
    only = nonce = None
    if "--only" in args:
        k = args.index("--only")
        only = args[k + 1]
        del args[k:k + 2]
    if "--nonce" in args:
        k = args.index("--nonce")
        nonce = args[k + 1]
        del args[k:k + 2]
    n, out = int(args[0]), args[1]
    policy = build(n, only, nonce)
    assert len(policy["rules"]) == n, (n, len(policy["rules"]))
    # one rule per line, as people keep large policies
    rules = ",\n  ".join(json.dumps(r) for r in policy["rules"])
    with open(out, "w") as f:
        f.write('{"version": 1, "mode": "enforce", "default": "read", "rules": [\n  %s\n]}\n' % rules)


if __name__ == "__main__":
    main()
