"""Writing a run's files whole or not at all, and reading the guest's
key=value files.

A file another step reads later (summary.json, tasks.csv, a plot's data)
is written under a temporary name and renamed over its own when complete:
a full disk or an interrupt leaves the old file or none, never a half.
"""

import contextlib
import json
import os


@contextlib.contextmanager
def replacing(path):
    """Yield a temporary path to write; it replaces path when the block
    ends without an exception, and is removed when it does not."""
    tmp = path + ".new"
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_json(path, data, default=None):
    with replacing(path) as tmp:
        with open(tmp, "w") as f:
            json.dump(data, f, indent=2, sort_keys=True, default=default)
            f.write("\n")


def read_kv(path):
    """key=value lines, as the guest writes them; {} when there is no file."""
    result = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, sep, value = line.rstrip("\n").partition("=")
                if sep:
                    result[key] = value
    return result
