#!/bin/sh
# make lint: checkpatch --strict on every patch of kernel-patches/series.
# Passes only with 0 errors, 0 warnings and 0 checks on each, in both modes.
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

# Each patch is checked as a patch, and also as a plain file (-f), the way
# a reviewer may run checkpatch over it: that pass sees the patch's own text,
# such as a lone space on a blank diff context line.
check() {
	out=$("$CHECKPATCH" --strict --no-tree --show-types "$@" 2>&1 || true)
	total=$(echo "$out" | grep '^total:' || echo "total: checkpatch printed no total")
	echo "$total" | grep -q '^total: 0 errors, 0 warnings, 0 checks' && return 0
	echo "$out" | grep -E '^(ERROR|WARNING|CHECK)' -A3 >&2 || true
	echo "lint: checkpatch $*: $total" >&2
	return 1
}

bad=0
for p in $patches; do
	if check "$PATCHES/$p" && check -f "$PATCHES/$p"; then
		echo "lint: ok   $p"
	else
		echo "lint: FAIL $p"
		bad=1
	fi
done
exit $bad
