#!/usr/bin/env python3
"""make test: host tests, then guest tests that boot the kernel in QEMU.

Prints one line per test and closes with "N passed, N failed".
"""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(os.path.dirname(HERE)))


class LineResult(unittest.TextTestResult):
    """A line per test with its time, so that long guest tests show progress."""

    def startTest(self, test):
        self._start = time.monotonic()
        super().startTest(test)

    def _line(self, word, test):
        self.stream.write("%-4s %-70s %5.1fs\n" % (word, test.id(), time.monotonic() - self._start))
        self.stream.flush()

    def addSuccess(self, test):
        unittest.TestResult.addSuccess(self, test)
        self._line("ok", test)

    def addFailure(self, test, err):
        unittest.TestResult.addFailure(self, test, err)
        self._line("FAIL", test)

    def addError(self, test, err):
        unittest.TestResult.addError(self, test, err)
        self._line("ERR", test)

    def addSkip(self, test, reason):
        unittest.TestResult.addSkip(self, test, reason)
        self._line("skip", test)


def main():
    names = sys.argv[1:] or ["test_host", "analysis.tests", "test_guest"]
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    runner = unittest.TextTestRunner(resultclass=LineResult, verbosity=0, stream=sys.stdout)
    result = runner.run(suite)
    failed = len(result.failures) + len(result.errors)
    passed = result.testsRun - failed - len(result.skipped)
    print("%d passed, %d failed, %d skipped" % (passed, failed, len(result.skipped)))
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
