"""Tests of the analysis package.

load_tests lets a plain unittest loader that is handed this package by
name (bench/tests/run.py's loadTestsFromNames) find the test modules too.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def load_tests(loader, tests, pattern):
    tests.addTests(loader.discover(HERE, pattern or "test*.py", top_level_dir=TOP))
    return tests
