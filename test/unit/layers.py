#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that hook/ is layered: layers.py HOOK_DIR

Each folder of hook/ is a layer, in the order of LAYERS. A file includes
headers of its own layer and of those before it, never of one after it,
and names them by folder ("base/util.h"). No files include each other in a
circle, through any number of others: a file and its header count as one
(compile/dfa.c and compile/dfa.h are compile/dfa). Prints what breaks
either rule, by file and line, and exits 1; exits 0 when nothing does.
"""
import os
import re
import sys

LAYERS = ["base", "policy", "compile", "kernel", "oci", "cmd"]

# Headers from outside hook/, and the first layer that may include them:
# bpf/'s are the program's tables and events, which base knows nothing of;
# the rest the build generates.
OUTSIDE = {
    "bpf/": "policy",
    "sysctl_guard.skel.h": "kernel",
    "sysctl_guard_digest.h": "kernel",
    "sg_build.h": "cmd",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<([^>]+)>)')


def outside_layer(path):
    for prefix, layer in OUTSIDE.items():
        if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
            return layer
    return None


def sources(hook):
    for folder, _, names in os.walk(hook):
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(folder, name), hook)


def main():
    hook = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../hook")
    root = os.path.dirname(os.path.abspath(hook))
    problems = []
    arrows = {}  # module -> {module it includes: "file:line" of the first such include}

    for rel in sorted(sources(hook)):
        where = "hook/" + rel
        layer = rel.split(os.sep)[0]
        if os.sep not in rel or layer not in LAYERS:
            problems.append(f"{where}: not in a layer's folder ({', '.join(LAYERS)})")
            continue
        rank = LAYERS.index(layer)
        module = os.path.splitext(rel)[0]
        out = arrows.setdefault(module, {})
        with open(os.path.join(hook, rel), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                quoted, system = m.groups()
                path = quoted or system
                first = path.split("/")[0]
                at = f"{where}:{number}"
                if first in LAYERS and os.path.isfile(os.path.join(hook, path)):
                    if LAYERS.index(first) > rank:
                        problems.append(f"{at}: includes {path}, but {first} is a layer "
                                        f"above {layer} ({' < '.join(LAYERS)})")
                    target = os.path.splitext(path)[0]
                    if target != module:
                        out.setdefault(target, at)
                    continue
                if system:
                    continue  # the system's (<bpf/bpf.h> is libbpf's)
                own = outside_layer(path)
                if own and (path.startswith("bpf/") and os.path.isfile(os.path.join(root, path))
                            or not path.startswith("bpf/")):
                    if LAYERS.index(own) > rank:
                        problems.append(f"{at}: includes {path}, which only {own} and the "
                                        f"layers above it may use")
                    continue
                named = [f"{name}/{path}" for name in LAYERS
                         if os.path.isfile(os.path.join(hook, name, path))]
                hint = f": write \"{named[0]}\"" if named else ""
                problems.append(f"{at}: includes \"{path}\", no header of hook/ named by "
                                f"its folder nor of bpf/ or the build{hint}")

    for circle in circles(arrows):
        loop = shortest_loop(arrows, circle)
        steps = [f"  {a} -> {b} ({arrows[a][b]})" for a, b in zip(loop, loop[1:] + loop[:1])]
        problems.append(f"circle of {len(circle)} files ({', '.join(circle)}), as in:\n" +
                        "\n".join(steps))

    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) with the layers of hook/ (see test/unit/layers.py)")
        return 1
    print(f"hook/: {len(arrows)} files (a .c and its .h as one) in {len(LAYERS)} layers, "
          "none includes a layer above its own, no circle")
    return 0


def shortest_loop(arrows, circle):
    """The shortest way from the circle's first file around to it again."""
    start, members = circle[0], set(circle)
    came_from, frontier = {start: None}, [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(arrows[v]):
                if w == start:
                    loop = [v]
                    while came_from[loop[-1]] is not None:
                        loop.append(came_from[loop[-1]])
                    return loop[::-1]
                if w in members and w not in came_from:
                    came_from[w] = v
                    following.append(w)
        frontier = following
    return circle


def circles(arrows):
    """Strongly connected components of more than one module (Tarjan), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(arrows.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(arrows):
        if v not in index:
            visit(v)
    return sorted(found)


if __name__ == "__main__":
    sys.exit(main())
