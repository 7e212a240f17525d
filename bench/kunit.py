#!/usr/bin/env python3
"""Boot the kernel once to run its built-in KUnit suites and read the KTAP
result from the serial console.  Exit 0 only when every case passed.

With no root filesystem the kernel panics right after the suites ran
(panic=-1 with -no-reboot ends QEMU), which keeps the boot short.
"""

import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu  # noqa: E402

RESULT = re.compile(r"^(\s*)(ok|not ok) (\d+) (\S+)(.*)$")


def parse_ktap(text):
    """Return (suites, cases): lists of (name, passed, skipped).

    KTAP nests with indentation: top-level "ok N name" lines are suites,
    indented ones their cases.  The console prefix "[  1.23] " is removed.
    """
    suites, cases = [], []
    for raw in text.splitlines():
        line = re.sub(r"^\[\s*[\d.]+\] ", "", raw)
        m = RESULT.match(line)
        if not m:
            continue
        indent, word, _, name, rest = m.groups()
        entry = (name, word == "ok", "# SKIP" in rest)
        (cases if indent else suites).append(entry)
    return suites, cases


def run(kernel, timeout=180):
    with tempfile.TemporaryDirectory(prefix="fiops-kunit-") as d:
        console = os.path.join(d, "console.log")
        cmd = qemu.command(kernel, None, "tcg", 1, 256, "console=ttyS0 panic=-1 kunit.enable=1",
                           console, None, [])
        _, _, timed_out = qemu.run(cmd, timeout, os.path.join(d, "qemu.log"))
        with open(console, errors="replace") as f:
            return f.read(), timed_out


def main():
    kernel = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) > 2 else ""
    text, timed_out = run(kernel)
    suites, cases = parse_ktap(text)
    suites = [s for s in suites if s[0].startswith(prefix)]
    for name, passed, skipped in cases:
        print("kunit: %-6s %s" % ("skip" if skipped else "ok" if passed else "FAIL", name))
    failed = [s for s in suites if not s[1]]
    if timed_out:
        print("kunit: the KUnit boot timed out")
    if not suites:
        print("kunit: no suite named %s* ran" % prefix)
    print("kunit: %d suites, %d cases, %d failed suites" % (len(suites), len(cases), len(failed)))
    return 0 if suites and not failed and not timed_out else 1


if __name__ == "__main__":
    sys.exit(main())
