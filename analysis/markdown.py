"""Markdown pieces the report's pages share."""

import os


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def slug(text):
    return "".join(c if c.isalnum() or c in "-." else "_" for c in text)


def image(png, caption):
    name = os.path.join(os.path.basename(os.path.dirname(png)), os.path.basename(png))
    return "![%s](%s)\n\n*%s*\n" % (caption, name, caption)
