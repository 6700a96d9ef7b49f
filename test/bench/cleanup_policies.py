#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unpins the shared per-policy programs this benchmark run left behind.

    cleanup_policies.py POLICY_ROOT BEFORE_FILE KEYS_FILE

sysctl-guard keeps one loaded program per policy pinned under POLICY_ROOT
after its last guard goes (for reuse; `sysctl-guard gc` removes them later).
The benchmark makes many policies of its own. A policy directory is removed
when its key is in KEYS_FILE (keys of guards this run made), it was not there
before the run (BEFORE_FILE), and no link uses its program any more. Nothing
else is touched: other users' policies stay.
"""
import json
import os
import shutil
import subprocess
import sys


def bpftool(*args):
    out = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else None


def main():
    root, before_file, keys_file = sys.argv[1:4]
    before = set(open(before_file).read().split()) if os.path.exists(before_file) else set()
    keys = set(open(keys_file).read().split()) if os.path.exists(keys_file) else set()
    linked = {l.get("prog_id") for l in (bpftool("link", "show") or [])}
    removed = kept = 0
    for key in sorted(keys - before):
        d = os.path.join(root, key)
        if not key or "/" in key or not os.path.isdir(d):
            continue
        prog = bpftool("prog", "show", "pinned", os.path.join(d, "prog"))
        if prog and prog.get("id") in linked:
            kept += 1
            continue
        shutil.rmtree(d, ignore_errors=True)
        removed += 1
    new = set(os.listdir(root)) - before if os.path.isdir(root) else set()
    print(f"unpinned {removed} policies of this run ({kept} still linked); "
          f"{len(new)} policy directories newer than the run remain (others')")


if __name__ == "__main__":
    main()
