#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Helpers of test/bench/run.sh.

    summarize.py memory DIR... [--base DIR...]
                                    kernel memory of what is pinned in DIRs (JSON,
                                    from bpftool)
    summarize.py report RAW_DIR     the table of figures and ratios of one run

Ratios are medians of per-round paired ratios: in every round each variant
ran right after the others, so a slow minute of a noisy machine moves the
numerator and the denominator together.
"""
import json
import os
import re
import statistics
import subprocess
import sys


def bpftool(*args):
    out = subprocess.run(["bpftool", "-j", *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def memory(dirs, base):
    """Kernel objects reachable from the pins in @dirs and from none of @base.

    A pinned map counts; a pinned program counts with the maps and BTF it
    uses; a pinned link leads to its program. Objects are counted once by id;
    with @base, what @dirs add to what is there already (the node's program,
    a policy's tables, other guards).
    """
    links = bpftool("-f", "link", "show")
    maps = {m["id"]: m for m in bpftool("-f", "map", "show")}
    progs = {q["id"]: q for q in bpftool("-f", "prog", "show")}
    btfs = {b["id"]: b for b in bpftool("btf", "show")}
    pinned_map = {path: m["id"] for m in maps.values() for path in m.get("pinned", [])}
    pinned_prog = {path: q["id"] for q in progs.values() for path in q.get("pinned", [])}
    pinned_link = {path: l for l in links for path in l.get("pinned", [])}

    def reach(pin_dirs):
        p_ids, m_ids, b_ids = set(), set(), set()
        for d in pin_dirs:
            for name in os.listdir(d):
                path = os.path.join(d, name)
                if path in pinned_map:
                    m_ids.add(pinned_map[path])
                elif path in pinned_prog:
                    p_ids.add(pinned_prog[path])
                elif path in pinned_link:
                    p_ids.add(pinned_link[path]["prog_id"])
        for pid in p_ids:
            m_ids.update(progs.get(pid, {}).get("map_ids", []))
            if "btf_id" in progs.get(pid, {}):
                b_ids.add(progs[pid]["btf_id"])
        return p_ids, m_ids, b_ids

    p_ids, m_ids, b_ids = reach(dirs)
    if base:
        bp, bm, bb = reach(base)
        p_ids, m_ids, b_ids = p_ids - bp, m_ids - bm, b_ids - bb
    own = [maps[i] for i in sorted(m_ids) if i in maps and maps[i].get("name") != "sg_events"]
    shared = [maps[i] for i in sorted(m_ids) if i in maps and maps[i].get("name") == "sg_events"]
    result = {
        "dirs": len(dirs),
        "links": sum(1 for d in dirs for n in os.listdir(d) if os.path.join(d, n) in pinned_link),
        "progs": len(p_ids),
        "prog_memlock": sum(progs[i].get("bytes_memlock", 0) for i in p_ids),
        "prog_jited": sum(progs[i].get("bytes_jited", 0) for i in p_ids),
        "btf_size": sum(btfs.get(i, {}).get("size", 0) for i in b_ids),
        "maps": [{"name": m.get("name"), "type": m.get("type"), "entries": m.get("max_entries"),
                  "value": m.get("bytes_value"), "memlock": m.get("bytes_memlock", 0)} for m in own],
        "shared": [{"name": m.get("name"), "memlock": m.get("bytes_memlock", 0)} for m in shared],
    }
    result["maps_memlock"] = sum(m["memlock"] for m in result["maps"])
    result["total"] = result["prog_memlock"] + result["maps_memlock"] + result["btf_size"]
    json.dump(result, sys.stdout, indent=1)
    print()


# --- report ---

def median(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(xs, p):
    """Nearest-rank percentile."""
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(-(-p * len(xs) // 100)) - 1))
    return xs[k]


def lines(path):
    try:
        with open(path) as f:
            return [l.split() for l in f if l.strip()]
    except FileNotFoundError:
        return []


def by_round(rows, label_col, value_col, round_col):
    """{label: {round: value}}"""
    out = {}
    for row in rows:
        out.setdefault(row[label_col], {})[row[round_col]] = float(row[value_col])
    return out


def paired(data, num, den):
    rounds = set(data.get(num, {})) & set(data.get(den, {}))
    return median([data[num][r] / data[den][r] for r in rounds])


def hook_times(path):
    """{variant: [ms per hook process]}: fork to exit of each process exec'd as
    BIN/hook-VARIANT, from `perf script -F comm,pid,time,event,trace` lines."""
    forked, running, out = {}, {}, {}
    try:
        f = open(path)
    except FileNotFoundError:
        return out
    with f:
        for line in f:
            m = re.search(r"(\d+\.\d+): sched:sched_process_(fork|exec|exit): (.*)", line)
            if not m:
                continue
            t, event, rest = float(m.group(1)), m.group(2), m.group(3)
            fields = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
            if event == "fork":
                forked[fields.get("child_pid")] = t
            elif event == "exec" and "/hook-" in fields.get("filename", ""):
                pid = fields.get("pid")
                running[pid] = (forked.pop(pid, t), fields["filename"].rsplit("/hook-", 1)[1])
            elif event == "exit" and fields.get("pid") in running:
                start, variant = running.pop(fields["pid"])
                out.setdefault(variant, []).append((t - start) * 1000)
    return out


def verdict(ok):
    return "MET" if ok else "MISSED"


def report(raw):
    R = lambda name: os.path.join(raw, name)
    meta = dict(l.split("=", 1) for l in open(R("meta.txt")).read().split("\n") if "=" in l)
    meta_line = open(R("meta.txt")).read().split("\n")[0]
    out = []
    p = out.append
    targets = []

    p(f"sysctl-guard benchmarks: {meta_line}, {meta.get('commit')}, {meta.get('build')}, "
      f"{meta.get('elapsed')} s")
    p("Ratios: median over rounds of per-round paired ratios (variants interleaved).")

    # 1. per-access
    p("")
    p("1. Per-access cost, ns/op (median)    unguarded  trivial   1 rule  100 rules  10k rules"
      "   g/triv 1/100/10k     10k/1")
    access = {}
    for op, name in (("read", "read kernel/ostype"), ("write", "write net/core/somaxconn (netns)")):
        d = by_round([l[1:] for l in lines(R(f"access_{op}.txt")) if l[0] == "sample"], 0, 2, 1)
        med = {k: median(list(v.values())) for k, v in d.items()}
        rg = [paired(d, g, "trivial") for g in ("g1", "g100", "g10k")]
        r10 = paired(d, "g10k", "g1")
        access[op] = (rg, r10)
        p(f"   {name:34s} {med.get('none', 0):9.0f} {med.get('trivial', 0):8.0f} "
          f"{med.get('g1', 0):8.0f} {med.get('g100', 0):10.0f} {med.get('g10k', 0):10.0f}"
          f"   {rg[0]:.3f}/{rg[1]:.3f}/{rg[2]:.3f}  {r10:8.3f}")
        p(f"   {'':34s} trivial/unguarded {paired(d, 'trivial', 'none'):.3f}, "
          f"guard's own cost over trivial: {med.get('g100', 0) - med.get('trivial', 0):.0f} ns (100 rules)")
        targets.append((f"per-access {op}: guarded/trivial <= 1.10 (1/100/10k rules)",
                        f"{max(rg):.3f} worst", max(rg) <= 1.10))
        targets.append((f"per-access {op}: 10k rules within 5% of 1 rule", f"{r10:.3f}",
                        abs(r10 - 1) <= 0.05))
    cost = {(l[0], l[1]): float(l[2]) for l in lines(R("prog_cost.txt")) if len(l) == 3}
    for op in ("read", "write"):
        if (op, "trivial") in cost:
            p(f"   program run time per {op} (kernel run-time stats, ns): trivial {cost[(op, 'trivial')]:.0f},"
              f" guard 1/100/10k rules " + "/".join(f"{cost.get((op, g), float('nan')):.0f}"
                                                   for g in ("g1", "g100", "g10k")))
    try:
        inherited = int(open(R("inherited.txt")).read().strip() or 0)
    except (FileNotFoundError, ValueError):
        inherited = -1
    p(f"   (sysctl programs inherited by the unguarded cgroup: {inherited})")

    # 2. hook latency
    p("")
    hook = lines(R("hook.txt"))
    hd = by_round(hook, 1, 2, 0)
    rss = {}
    for row in hook:
        rss.setdefault(row[1], []).append(int(row[3]))
    p("2. Hook latency (state on stdin to exit)   median ms     n   x true   peak RSS KiB (max)")
    labels = {"true": "`true` (process floor)", "fast": "hook, no policy (fast path)",
              "100new": "hook, 100 rules, new policy", "100use": "hook, 100 rules, policy in use",
              "10k": "hook, 10,000 rules, new policy", "10kuse": "hook, 10,000 rules, policy in use",
              "10kpre": "hook, 10,000 rules, preloaded",
              "floor": "floor of a new 10,000-rule policy"}
    hmed = {}
    for k in ("true", "fast", "100new", "100use", "10k", "floor", "10kuse", "10kpre"):
        if k not in hd:
            continue
        v = list(hd[k].values())
        hmed[k] = median(v) / 1e6
        p(f"   {labels[k]:38s} {hmed[k]:10.2f} {len(v):5d} {paired(hd, k, 'true'):8.2f}"
          f"   {int(median(rss[k])):6d} ({max(rss[k])})")
    for l in lines(R("preload.txt")):
        p(f"   `sysctl-guard preload` of the preloaded 10,000-rule profile, once before its"
          f" first container: {int(l[1]) / 1e6:.2f} ms, peak RSS {l[2]} KiB")
    fast_ratio = paired(hd, "fast", "true")
    targets.append(("no-policy fast path <= 1.5x `true`", f"{fast_ratio:.2f}x", fast_ratio <= 1.5))
    for k, what in (("100new", "100 rules"), ("10k", "10,000 rules, new policy"),
                    ("10kuse", "10,000 rules, in use"), ("10kpre", "10,000 rules, preloaded")):
        if k in rss:
            targets.append((f"hook peak RSS <= 8 MiB, {what}", f"{max(rss[k])} KiB", max(rss[k]) <= 8192))

    def shim(path):
        rows = [dict(kv.split("=") for kv in l) for l in lines(path)]
        return {k: median([float(r[k]) for r in rows]) for k in rows[0]} if rows else None, len(rows)

    proxy = {}
    for l in lines(R("proxy.txt")):
        proxy.setdefault(l[0], []).append(float(l[1]) / 1e6)
    comp = {}
    for l in lines(R("compile_bench.txt")):
        if l and l[0].isdigit():
            comp[int(l[0])] = float(l[-1])
    p("   breakdown, ms (medians; bpf(2) calls timed by an LD_PRELOAD shim, in a dynamically"
      " linked glibc twin of the binary; n runs):")
    p("                       total   before bpf(2)  probes(n)      verify+JIT  maps(create,fill n)"
      "  BTF  attach+pins  other user")
    for label, path in (("100 rules, new", "shim_100.txt"), ("100, in use", "shim_100use.txt"),
                        ("10k rules, new", "shim_10k.txt")):
        s, n = shim(R(path))
        if not s:
            continue
        if s["main_insns"] < 64:  # no guard program loaded (a policy in use): all loads were probes
            s["probe_us"] += s["main_us"]
            s["probe_n"] += s["main_n"]
            s["main_us"] = 0
        ms = lambda k: s[k] / 1e3
        p(f"   {label:14s} {ms('total'):10.1f} {ms('pre'):14.1f} {ms('probe_us'):7.1f} ({s['probe_n']:.0f})"
          f" {ms('main_us'):12.1f} {ms('mapc_us') + ms('mapu_us'):9.1f} ({s['mapu_n']:.0f})"
          f" {ms('btf_us'):10.2f} {ms('link_us') + ms('pin_us'):10.2f}"
          f" {ms('user_mid') + ms('post') + ms('other_us'):10.1f}   n={n}, "
          f"{s['main_insns']:.0f} insns")
    phase_rows = [(label, lines(R(path))) for label, path in
                  (("100 rules, new", "phases_100.txt"), ("100, in use", "phases_100use.txt"),
                   ("10k rules, new", "phases_10k.txt"))]
    if any(rows for _, rows in phase_rows):
        p("   phases, ms (medians; the binary itself, SYSCTL_GUARD_TIMING=1; setup: state, config,"
          " program, inputs digest, placer):")
        for label, rows in phase_rows:
            times = {}
            for l in rows:  # sysctl-guard: timing: NAME MS NAME MS ... exit MS ms
                f = l[2:-1]
                for name, ms in zip(f[0::2], f[1::2]):
                    times.setdefault(name, []).append(float(ms))
            if times:
                p(f"   {label:14s} " + "  ".join(f"{k} {median(v):.2f}" for k, v in times.items())
                  + f"   n={len(rows)}")
    try:
        ver = open(R("verifier.txt")).read().split()
        h = open(R("hashes.txt")).read().split()
        what = (f"{ver[1]} instructions processed" if ver[1] != "?"
                else "it was loaded before this run")
        p(f"   the node's program ({ver[3]} instructions) is verified once per boot: {what};"
          f" in-use policy hash {'equals' if len(h) == 2 and h[0] == h[1] else 'DIFFERS from'}"
          f" the companion's")
    except (FileNotFoundError, IndexError):
        pass
    if proxy:
        p(f"   proxies, 100 rules (process wall, median): `--version` {median(proxy.get('version', [])):.2f},"
          f" `check` (parse+compile+warnings) {median(proxy.get('check', [])):.2f},"
          f" `explain` (parse+compile) {median(proxy.get('explain', [])):.2f}")
    if comp:
        p("   compile only (compile_bench, in-process): "
          + ", ".join(f"{k} rules {v:.2f}" for k, v in sorted(comp.items())))

    runc = lines(R("runc.txt"))
    rd = by_round(runc, 1, 2, 0)
    p("")
    p("   runc run busybox `true`                 median ms     n   x no hook   x /bin/true hooks")
    rl = {"none": "no hook", "noophook": "static no-op as both hooks (floor)",
          "truehook": "/bin/true as both hooks",
          "fast": "hook, no policy", "100new": "hook, 100 rules, new policy",
          "100use": "hook, 100 rules, policy in use", "10k": "hook, 10,000 rules, new policy",
          "10kuse": "hook, 10,000 rules, policy in use", "10kpre": "hook, 10,000 rules, preloaded"}
    order = ("none", "noophook", "truehook", "fast", "100new", "100use", "10k", "10kuse", "10kpre")
    rr = {}
    for k in order:
        if k not in rd:
            continue
        v = list(rd[k].values())
        rr[k] = paired(rd, k, "none")
        floor = f"{paired(rd, k, 'truehook'):12.2f}" if "truehook" in rd else ""
        p(f"   {rl[k]:38s} {median(v) / 1e6:10.2f} {len(v):5d} {rr[k]:8.2f}    {floor}")
    # Two hook processes per container (createRuntime, poststop), timed inside the runs.
    ht = hook_times(R("sched.txt"))
    base = median(list(rd.get("none", {}).values())) / 1e6 if "none" in rd else float("nan")
    added = {}
    if ht:
        p("   the hooks inside those runs (scheduler events, fork to exit; both hooks of a container):")
        p("                                          ms per container   hooks   added to a start without hooks"
          "   ms above the floor   createRuntime, poststop (medians)")
        per_container = {k: sum(ht[k]) / (len(ht[k]) / 2) for k in order[1:]
                         if k in ht and len(ht[k]) >= 2}
        for k, ms in per_container.items():
            added[k] = 1 + ms / base
            above = f"{ms - per_container['noophook']:12.2f}" if "noophook" in per_container else ""
            # A container's hooks run one after the other: createRuntime, then poststop.
            stages = f"{median(ht[k][0::2]):.2f}, {median(ht[k][1::2]):.2f}"
            p(f"   {rl[k]:38s} {ms:10.2f} {len(ht[k]):9d}   {added[k]:8.3f}x {above:>20s}   {stages:>20s}")
        if "noophook" in per_container:
            left = [share * base - per_container["noophook"] for share in (0.05, 0.10, 0.25)]
            p(f"   (5% of a start leaves {left[0]:.2f} ms above the floor"
              f" for a hook's work in both processes, 10% {left[1]:.2f}, 25% {left[2]:.2f})")
        p("   (a runc start varies by several ms between runs, more than a hook costs: the targets"
          " below use these times)")
    for k, lim, what in (("100new", 1.15, "100 rules, new policy"), ("100use", 1.05, "100 rules, in use"),
                         ("10k", 1.60, "10,000 rules, new policy"),
                         ("10kuse", 1.05, "10,000 rules, in use"),
                         ("10kpre", 1.05, "10,000 rules, preloaded")):
        if k in added:
            targets.append((f"runc start + hook, {what} <= {lim:.2f}x (hook time / start)",
                            f"{added[k]:.3f}x (paired runs {rr.get(k, float('nan')):.2f}x)",
                            added[k] <= lim))
        elif k in rr:
            targets.append((f"runc start + hook, {what} <= {lim:.2f}x", f"{rr[k]:.2f}x", rr[k] <= lim))

    # 3. kernel memory
    p("")
    p("3. Kernel memory, bytes (bytes_memlock of programs and maps + program BTF; objects counted"
      " once by id)")
    mem = {}
    for label, path in (("node: the program, once per boot", "mem_node.json"),
                        ("20 rules, first container", "mem20.json"),
                        ("20 rules, one more container", "mem20_more.json"),
                        ("100 rules, first container", "mem100.json"),
                        ("10k rules, first container", "mem10k.json")):
        try:
            m = json.load(open(R(path)))
        except (FileNotFoundError, ValueError):
            continue
        mem[label] = m
        big = sorted(m["maps"], key=lambda x: -x["memlock"])[:3]
        p(f"   {label:33s} total {m['total']:9d}  progs {m['progs']} ({m['prog_memlock']}, jited"
          f" {m['prog_jited']})  maps {len(m['maps'])} ({m['maps_memlock']})  BTF {m['btf_size']}")
        p(f"   {'':33s} largest: " + ", ".join(f"{x['name']} {x['memlock']}" for x in big))
    node = mem.get("node: the program, once per boot")
    storage = [x for x in (node or {}).get("maps", []) if "cgroup_storage" in (x["type"] or "")]
    if storage:
        p("   not in memlock: one element per guarded cgroup in each cgroup-storage map ("
          + ", ".join(f"{x['name']} {x['value']} B{' per CPU' if 'percpu' in x['type'] else ''}"
                      for x in {x['name']: x for x in storage}.values()) + ")")
    for label in ("20 rules, first container", "20 rules, one more container"):
        if label in mem:
            targets.append((f"kernel memory <= 64 KiB per container, {label}",
                            f"{mem[label]['total'] / 1024:.1f} KiB", mem[label]["total"] <= 65536))
    if node:
        p(f"   shared by all guards of the node (not counted above): the program and its maps, and the"
          f" events ring buffer {sum(s['memlock'] for s in node['shared'])}")

    # 4. scale
    p("")
    att = [float(l[1]) / 1e6 for l in lines(R("scale_attach.txt")) if l[3] == "0"]
    fails = sum(1 for l in lines(R("scale_attach.txt")) if l[3] != "0")
    try:
        n_done, pinned, *reason = open(R("scale_n.txt")).read().split()
    except (FileNotFoundError, ValueError):
        n_done, pinned, reason = "0", "0", ["not run"]
    a1 = by_round([l[1:] for l in lines(R("scale_access_1.txt")) if l[0] == "sample"], 0, 2, 1)
    an = by_round([l[1:] for l in lines(R("scale_access_n.txt")) if l[0] == "sample"], 0, 2, 1)
    r1, rn = paired(a1, "g", "trivial"), paired(an, "g", "trivial")
    p(f"4. Scale: {n_done} cgroups guarded at once (100-rule policy; {' '.join(reason)}),"
      f" {pinned} guards pinned on the node")
    if att:
        p50, p99 = pct(att, 50), pct(att, 99)
        p(f"   attach (`sysctl-guard attach`, process wall) ms: p50 {p50:.1f}  p99 {p99:.1f}"
          f"  max {max(att):.1f}  p99/p50 {p99 / p50:.2f}  failures {fails}")
        targets.append((f"{n_done} concurrent guards, all attached, p99 <= 10x p50",
                        f"{p99 / p50:.2f}x, {fails} failed", fails == 0 and int(n_done) >= 500 and p99 <= 10 * p50))
    try:
        ms = json.load(open(R("mem_scale.json")))
        p(f"   kernel memory of the {ms['links']} guards and their policy together:"
          f" {ms['total'] / 2**20:.2f} MiB ({len(ms['maps'])} maps), {ms['total'] / ms['links'] / 1024:.1f} KiB"
          f" per guard")
    except (FileNotFoundError, ValueError, ZeroDivisionError):
        pass
    p(f"   per-access read in guard #1, guarded/trivial: with 1 guard {r1:.3f}, with {n_done} guards"
      f" {rn:.3f} (x{rn / r1:.3f})")
    targets.append(("per-access unchanged with 500 guards (no more than 5% slower)", f"x{rn / r1:.3f}",
                    rn / r1 <= 1.05 and int(n_done) >= 500))

    p("")
    p("Targets of issue 6:")
    for what, got, ok in targets:
        p(f"   {verdict(ok):6s} {what}: {got}")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "memory":
        args = sys.argv[2:]
        cut = args.index("--base") if "--base" in args else len(args)
        memory(args[:cut], args[cut + 1:])
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    else:
        sys.exit("usage: summarize.py memory DIR... [--base DIR...] | report RAW_DIR")
