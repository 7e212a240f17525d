#!/usr/bin/env python3
"""Export the FIOPS series from a kernel git tree into kernel-patches/.

    bench/export_patches.py <kernel tree> <base commit>

Runs git format-patch -s --cover-letter --no-signature, keeps the subject
and text of the cover letter already in kernel-patches/, writes the series
file, and writes blank diff context lines as empty lines instead of a lone
space: patch(1) and git apply read both the same, and checkpatch run over
the patch file itself (-f) then finds no trailing whitespace.
"""

import glob
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATCHES = os.path.join(TOP, "kernel-patches")
COVER = "0000-cover-letter.patch"
SHORTLOG = re.compile(r"^\S.* \(\d+\):$")


def cover_text(path):
    """(subject, blurb) of an existing cover letter, or None."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = f.read().split("\n")
    subject = next(line.split("] ", 1)[1] for line in lines if line.startswith("Subject: "))
    start = lines.index("") + 1
    end = next(i for i in range(start, len(lines)) if SHORTLOG.match(lines[i]))
    return subject, "\n".join(lines[start:end]).strip()


def strip_blank_context(text):
    """' ' lines inside hunks (blank context lines) become ''."""
    out, in_diff = [], False
    for line in text.split("\n"):
        in_diff = in_diff or line.startswith("diff --git ")
        out.append("" if in_diff and line == " " else line)
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 1
    tree, base = sys.argv[1:]
    old_cover = cover_text(os.path.join(PATCHES, COVER))
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(["git", "-C", tree, "format-patch", "-q", "-s", "--no-signature",
                        "--cover-letter", "-o", out, base], check=True)
        names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "*.patch")))
        for old in glob.glob(os.path.join(PATCHES, "*.patch")):
            os.remove(old)
        for name in names:
            with open(os.path.join(out, name)) as f:
                text = f.read()
            if name == COVER and old_cover:
                text = text.replace("*** SUBJECT HERE ***", old_cover[0])
                text = text.replace("*** BLURB HERE ***", old_cover[1])
            with open(os.path.join(PATCHES, name), "w") as f:
                f.write(strip_blank_context(text))
    with open(os.path.join(PATCHES, "series"), "w") as f:
        f.write("".join(n + "\n" for n in names if n != COVER))
    if not old_cover:
        print("export: write the cover letter's subject and text into %s" % COVER)
    print("export: %d patches into %s" % (len(names) - 1, PATCHES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
