#!/bin/sh
# Build the guest kernel: unpack Debian's linux-source tarball outside git,
# apply kernel-patches/series, merge guest/kernel.config over tinyconfig,
# build bzImage.  Rebuilds only when the series, a patch or the fragment
# changed: build/kernel.stamp holds the hash of all three.
#
# FLAVOUR=debug builds the debug kernel of make stress next to it, in
# build/linux-debug with guest/kernel-debug.config merged in as well; its
# files are named kernel-debug.* instead of kernel.*.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
PATCHES=$TOP/kernel-patches
FLAVOUR=${FLAVOUR:-}
case "$FLAVOUR" in
"") FRAGMENTS=$TOP/guest/kernel.config; SUFFIX= ;;
debug) FRAGMENTS="$TOP/guest/kernel.config $TOP/guest/kernel-debug.config"; SUFFIX=-debug ;;
*) echo "kernel: FLAVOUR=$FLAVOUR: only debug, or nothing" >&2; exit 1 ;;
esac
TREE=$BUILD/linux$SUFFIX
JOBS=${JOBS:-$(nproc)}

say() { echo "kernel: $*"; }
die() { echo "kernel: $*" >&2; exit 1; }

series_patches() {
	[ -f "$PATCHES/series" ] || return 0
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$PATCHES/series"
}

# The patch-series hash covers the series file and every patch it names.
series_hash() {
	{
		[ -f "$PATCHES/series" ] && cat "$PATCHES/series"
		for p in $(series_patches); do
			[ -f "$PATCHES/$p" ] || die "series names $p, which does not exist"
			cat "$PATCHES/$p"
		done
	} | sha256sum | cut -d' ' -f1
}

[ -f "$TARBALL" ] || die "$TARBALL not found (make deps installs linux-source-6.1)"
mkdir -p "$BUILD"
SERIES_SHA=$(series_hash)
FRAGMENT_SHA=$(cat $FRAGMENTS | sha256sum | cut -d' ' -f1)
STAMP=$(printf '%s %s %s\n' "$(basename "$TARBALL")" "$SERIES_SHA" "$FRAGMENT_SHA")
LOCALVERSION="-fiops-$(echo "$SERIES_SHA" | cut -c1-12)$SUFFIX"

if [ -f "$BUILD/kernel$SUFFIX.stamp" ] && [ "$(cat "$BUILD/kernel$SUFFIX.stamp")" = "$STAMP" ] &&
   [ -f "$TREE/arch/x86/boot/bzImage" ]; then
	say "up to date ($(cat "$TREE/include/config/kernel.release"))"
	exit 0
fi

prepare_tree() {
	say "unpacking $(basename "$TARBALL")"
	rm -rf "$TREE" "$TREE.new" "$BUILD/tree$SUFFIX.stamp"
	mkdir -p "$TREE.new"
	tar -xf "$TARBALL" -C "$TREE.new" --strip-components=1
	for p in $(series_patches); do
		say "applying $p"
		patch -d "$TREE.new" -p1 --batch --forward --quiet < "$PATCHES/$p" ||
			die "patch $p failed to apply; the tree is left in $TREE.new"
	done
	configure "$TREE.new"
	mv "$TREE.new" "$TREE"
	echo "$STAMP" > "$BUILD/tree$SUFFIX.stamp"
}

# Merge the fragments over tinyconfig and fail on any option Kconfig dropped,
# unless the symbol does not exist in this tree at all (FIOPS before its
# patches land): that one only warns.
configure() {
	dir=$1
	say "configuring (tinyconfig + $(for f in $FRAGMENTS; do basename "$f"; done | paste -sd+))"
	make -C "$dir" -s tinyconfig >/dev/null
	"$dir/scripts/kconfig/merge_config.sh" -m -O "$dir" "$dir/.config" $FRAGMENTS >/dev/null 2>&1
	"$dir/scripts/config" --file "$dir/.config" --set-str LOCALVERSION "$LOCALVERSION" \
		--disable LOCALVERSION_AUTO
	make -C "$dir" -s olddefconfig
	bad=0
	for line in $(cat $FRAGMENTS | grep -E '^CONFIG_[A-Z0-9_]+='); do
		grep -qx "$line" "$dir/.config" && continue
		sym=$(echo "$line" | sed -e 's/^CONFIG_//' -e 's/=.*//')
		# =n is written as "# CONFIG_X is not set", or not at all.
		case "$line" in *=n)
			grep -q "^CONFIG_$sym=" "$dir/.config" || continue ;;
		esac
		if grep -rqx --include='Kconfig*' "config $sym" "$dir"; then
			echo "kernel: $line requested but not set (missing dependency?)" >&2
			bad=1
		else
			say "note: $sym does not exist in this tree, skipped"
		fi
	done
	[ "$bad" = 0 ] || die "$FRAGMENTS do not apply cleanly"
}

# Run make in the background and print a progress line every 20 seconds.
build() {
	log=$BUILD/kernel$SUFFIX-build.log
	say "building bzImage with -j$JOBS (log: $log)"
	start=$(date +%s)
	make -C "$TREE" -j"$JOBS" bzImage > "$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 20
		kill -0 "$pid" 2>/dev/null || break
		say "  $(( $(date +%s) - start ))s, $(grep -c '^  CC' "$log") files compiled"
	done
	if ! wait "$pid"; then
		grep -E 'error|Error' "$log" | head -n 20 >&2
		die "build failed; see $log"
	fi
	say "built $(cat "$TREE/include/config/kernel.release") in $(( $(date +%s) - start ))s"
}

if [ ! -f "$BUILD/tree$SUFFIX.stamp" ] || [ "$(cat "$BUILD/tree$SUFFIX.stamp")" != "$STAMP" ] ||
   [ ! -d "$TREE" ]; then
	prepare_tree
fi
build
{
	echo "{"
	echo "  \"release\": \"$(cat "$TREE/include/config/kernel.release")\","
	echo "  \"series_sha256\": \"$SERIES_SHA\","
	echo "  \"series\": \"$(series_patches | tr '\n' ' ' | sed 's/ $//')\","
	echo "  \"fragment_sha256\": \"$FRAGMENT_SHA\","
	echo "  \"config_sha256\": \"$(sha256sum "$TREE/.config" | cut -d' ' -f1)\","
	echo "  \"tarball\": \"$(basename "$TARBALL")\""
	echo "}"
} > "$BUILD/kernel$SUFFIX.json"
echo "$STAMP" > "$BUILD/kernel$SUFFIX.stamp"
