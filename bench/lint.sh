#!/bin/sh
# make lint: checkpatch --strict on every patch of kernel-patches/series.
# Passes only with 0 errors, 0 warnings and 0 checks on each.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
CHECKPATCH=$BUILD/linux/scripts/checkpatch.pl
PATCHES=$TOP/kernel-patches

[ -x "$CHECKPATCH" ] || { echo "lint: $CHECKPATCH missing (make kernel unpacks it)" >&2; exit 1; }
patches=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$PATCHES/series" 2>/dev/null || true)
if [ -z "$patches" ]; then
	echo "lint: kernel-patches/series is empty, nothing to check"
	exit 0
fi

bad=0
for p in $patches; do
	out=$("$CHECKPATCH" --strict --no-tree --show-types "$PATCHES/$p" 2>&1 || true)
	total=$(echo "$out" | grep '^total:' || echo "total: checkpatch printed no total")
	if echo "$total" | grep -q '^total: 0 errors, 0 warnings, 0 checks'; then
		echo "lint: ok   $p"
	else
		echo "$out" | grep -E '^(ERROR|WARNING|CHECK)' -A3 >&2 || true
		echo "lint: FAIL $p ($total)"
		bad=1
	fi
done
exit $bad
