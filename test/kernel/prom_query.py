#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads a Prometheus text exposition (format 0.0.4) for the kernel suite.

  prom_query.py FILE NAME [LABEL=VALUE...]
      the values of family NAME's samples whose labels have those values,
      one a line
  prom_query.py FILE NAME [LABEL=VALUE...] --label LABEL[,LABEL...]
      the same samples' values of those labels, each as Python's ascii()
      writes it (a newline shows as \\n, U+FFFD as \\ufffd); the label
      _value stands for the sample's value
  prom_query.py FILE --states-agree
      "agree" when, for each state, sysctl_guard_guards{state} counts the
      guards whose sysctl_guard_guard_state has that state; else what differs

Label values given here are taken as bytes: a byte that is not UTF-8 stands
for U+FFFD, as the writer replaces it.
"""
import os
import re
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')
ESCAPES = {"n": "\n", "\\": "\\", '"': '"'}


def samples(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            if not m:
                sys.exit(f"not a sample line: {line!r}")
            labels = {k: re.sub(r"\\(.)", lambda e: ESCAPES[e.group(1)], v)
                      for k, v in LABEL.findall(m.group(2) or "")}
            yield m.group(1), labels, m.group(3)


def as_written(arg):
    return os.fsencode(arg).decode("utf-8", "replace")


def states_agree(path):
    counts, per_guard = {}, {}
    for name, labels, value in samples(path):
        if name == "sysctl_guard_guards":
            counts[labels["state"]] = int(value)
        elif name == "sysctl_guard_guard_state":
            per_guard[labels["state"]] = per_guard.get(labels["state"], 0) + int(value)
    differ = [s for s in counts if counts[s] != per_guard.get(s, 0)]
    differ += [s for s in per_guard if s not in counts]
    print("agree" if not differ else f"differ: {counts} {per_guard}")


def main():
    args = sys.argv[1:]
    if args[1] == "--states-agree":
        return states_agree(args[0])
    path, name, show = args[0], args[1], None
    selectors = args[2:]
    if "--label" in selectors:
        show = selectors[selectors.index("--label") + 1]
        selectors = selectors[:selectors.index("--label")]
    wanted = dict(s.split("=", 1) for s in selectors)
    wanted = {k: as_written(v) for k, v in wanted.items()}
    for n, labels, value in samples(path):
        if n == name and all(labels.get(k) == v for k, v in wanted.items()):
            labels["_value"] = value
            print(" ".join(ascii(labels.get(k)) for k in show.split(",")) if show else value)


main()
