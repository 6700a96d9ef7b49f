#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""sysctl-guard(8) and `sysctl-guard help COMMAND` must say the same.

For every command `sysctl-guard --help` lists, the man page, as man(1)
renders it, has a subsection under COMMANDS named after the command, whose
first paragraph is the "Usage:" line of `sysctl-guard help COMMAND` and
whose text contains every sentence of its help, in order. Whitespace is
normalised; backticks, with which the help quotes a command, are dropped
(the man page sets it in bold). The page has no subsection for a command
the binary lacks, except `help`, and its SYNOPSIS names --version and --help.

Usage: man_agree.py SYSCTL_GUARD PAGE [REASON]
PAGE is the generated roff (build/docs/man/sysctl-guard.8); an empty PAGE
means the pages were not built, and the test skips (77) with REASON. It also
skips where man(1) is missing (Debian: man-db). Prints one line per command;
exits 1 when anything disagrees.
"""
import difflib
import os
import re
import shutil
import subprocess
import sys

SKIP = 77


def normalise(text):
    return " ".join(text.replace("`", "").split())


def sentences(text):
    """Sentences of normalised text: split after a full stop and a space."""
    return [s for s in re.split(r"(?<=\.) ", text) if s]


def render(page):
    """The page as man(1) shows it, one paragraph per line: a line too wide to wrap."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C",
        "MANWIDTH": "4000",
    }
    r = subprocess.run(["man", "-l", "-P", "cat", page], env=env, capture_output=True,
                       text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"FAIL: man -l {page} exited {r.returncode}: {r.stderr.strip()}")
    return re.sub(r".\x08", "", r.stdout)


def parse_page(text):
    """SYNOPSIS's text and, per subsection of COMMANDS, its paragraphs (normalised)."""
    synopsis, commands = [], {}
    section, current = None, None
    for line in text.splitlines():
        if line and not line[0].isspace():
            section, current = line.strip(), None
            continue
        if section == "SYNOPSIS":
            synopsis.append(line)
        elif section == "COMMANDS":
            if re.match(r"^ {3}\S", line):
                current = commands.setdefault(line.strip(), [[]])
            elif current is not None:
                if line.strip():
                    current[-1].append(line)
                elif current[-1]:
                    current.append([])
    paragraphs = {
        name: [normalise(" ".join(p)) for p in paras if p]
        for name, paras in commands.items()
    }
    return normalise(" ".join(synopsis)), paragraphs


def listed_commands(sg):
    r = subprocess.run([sg, "--help"], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"FAIL: {sg} --help exited {r.returncode}")
    names, inside = [], False
    for line in r.stdout.splitlines():
        if line == "Commands:":
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            m = re.match(r"^  (\S+)\s", line)
            if not m:
                sys.exit(f"FAIL: {sg} --help: cannot read the command line {line!r}")
            names.append(m.group(1))
    if not names:
        sys.exit(f"FAIL: {sg} --help lists no commands under \"Commands:\"")
    return names


def command_help(sg, name):
    """(usage line without "Usage: ", help text) of `sysctl-guard help NAME`."""
    r = subprocess.run([sg, "help", name], capture_output=True, text=True, check=False)
    first, _, rest = r.stdout.partition("\n")
    if r.returncode != 0 or not first.startswith("Usage: sysctl-guard " + name):
        sys.exit(f"FAIL: {sg} help {name} exited {r.returncode}: {first!r}")
    return normalise(first[len("Usage: "):]), normalise(rest)


def word_diff(want, got):
    """@want (the help's) against @got (the page's): [-only the help's-] {+only the page's+}."""
    out = []
    for op in difflib.ndiff(want.split(), got.split()):
        if op[0] == "-":
            out.append("[-" + op[2:] + "-]")
        elif op[0] == "+":
            out.append("{+" + op[2:] + "+}")
        elif op[0] == " ":
            out.append(op[2:])
    return " ".join(out)


def check_command(name, usage, help_text, paragraphs):
    """The problems of the page's subsection @name, as strings."""
    if paragraphs is None:
        return ["the man page has no subsection for it under COMMANDS"]
    if not paragraphs or paragraphs[0] != usage:
        got = paragraphs[0] if paragraphs else "(nothing)"
        return ["its synopsis differs from the help's Usage line ([-help only-] {+page only+}): "
                + word_diff(usage, got)]
    problems = []
    body = " ".join(paragraphs[1:])
    at = 0
    for sentence in sentences(help_text):
        found = body.find(sentence, at)
        if found >= 0:
            at = found + len(sentence)
            continue
        if sentence in body:
            problems.append(f"the help's sentence comes out of order in the man page: {sentence}")
            continue
        near = difflib.get_close_matches(sentence, sentences(body), n=1, cutoff=0.4)
        if near:
            problems.append("a sentence of the help differs in the man page "
                            "([-help only-] {+page only+}): " + word_diff(sentence, near[0]))
        else:
            problems.append(f"the man page lacks the help's sentence: {sentence}")
    return problems


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: man_agree.py SYSCTL_GUARD PAGE [REASON]")
    sg, page = sys.argv[1], sys.argv[2]
    if not page:
        reason = sys.argv[3] if len(sys.argv) > 3 else "the man pages are not built"
        print(f"SKIP: {reason}")
        return SKIP
    if not shutil.which("man"):
        print("SKIP: man(1) is not installed (apt-get install man-db groff-base)")
        return SKIP
    if not os.path.isfile(page):
        print(f"FAIL: {page} is not there: the build should have made it")
        return 1

    synopsis, pages = parse_page(render(page))
    if not pages:
        print(f"FAIL: {page} renders with no subsections under COMMANDS")
        return 1
    failed = agree = 0
    names = listed_commands(sg)
    for name in names:
        usage, help_text = command_help(sg, name)
        problems = check_command(name, usage, help_text, pages.get(name))
        for p in problems:
            print(f"FAIL {name}: {p}")
        if not problems:
            print(f"ok   {name}: synopsis and {len(sentences(help_text))} sentence(s) of the help")
            agree += 1
        failed += bool(problems)

    for name, paragraphs in pages.items():
        if name == "help":
            if not paragraphs or paragraphs[0] != "sysctl-guard help COMMAND":
                print("FAIL help: its synopsis is not \"sysctl-guard help COMMAND\"")
                failed += 1
            continue
        if name not in names:
            print(f"FAIL {name}: the man page documents it, and sysctl-guard --help does not list it")
            failed += 1
    if "help" not in pages:
        print("FAIL help: the man page has no subsection for it under COMMANDS")
        failed += 1
    for option in ("--version", "--help"):
        if option not in synopsis.split():
            print(f"FAIL SYNOPSIS: it does not name {option}")
            failed += 1

    print(f"{agree} of {len(names)} commands agree with the man page")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
