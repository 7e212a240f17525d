#!/bin/sh
# Build the guest initramfs: busybox-static, fio, blktrace and blkparse with
# the shared libraries they need, copied from this machine's packages, and
# guest/init.  Uncompressed: unpacking gzip under TCG costs seconds a boot.
# PROFILE=1 builds initramfs-perf.cpio instead, with perf added for make
# overhead PROFILE=1: 25 MB more, so only when asked for.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
BINARIES="/usr/bin/fio /usr/sbin/blktrace /usr/bin/blkparse"
PACKAGES="fio blktrace busybox-static libc6"
NAME=initramfs
if [ "${PROFILE:-}" ]; then
	BINARIES="$BINARIES /usr/bin/perf"
	PACKAGES="$PACKAGES linux-perf"
	NAME=initramfs-perf
fi
OUT=$BUILD/$NAME.cpio

stamp() {
	{
		cat "$TOP/guest/init" "$TOP/guest/stress.sh" "$TOP/guest/overhead.sh" "$0"
		# shellcheck disable=SC2086  # the list is meant to split
		dpkg-query -W $PACKAGES
	} | sha256sum | cut -d' ' -f1
}

mkdir -p "$BUILD"
if [ -f "$OUT" ] && [ "$(cat "$BUILD/$NAME.stamp" 2>/dev/null)" = "$(stamp)" ]; then
	echo "guest: $NAME up to date"
	exit 0
fi

root=$BUILD/$NAME.root
rm -rf "$root"
mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" \
	"$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/out"
cp /bin/busybox "$root/bin/busybox"
for b in $BINARIES; do
	cp "$b" "$root$b"
done
# Every shared library the binaries load, at the path ldd resolved.
for lib in $(ldd $BINARIES | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | sort -u); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
# fio's external I/O engines, if the package ships any.
if [ -d /usr/lib/x86_64-linux-gnu/fio ]; then
	mkdir -p "$root/usr/lib/x86_64-linux-gnu"
	cp -r /usr/lib/x86_64-linux-gnu/fio "$root/usr/lib/x86_64-linux-gnu/"
fi
cp "$TOP/guest/init" "$root/init"
cp "$TOP/guest/stress.sh" "$root/stress.sh"
cp "$TOP/guest/overhead.sh" "$root/overhead.sh"
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) > "$OUT.new"
mv "$OUT.new" "$OUT"
stamp > "$BUILD/$NAME.stamp"
echo "guest: built $OUT ($(du -h "$OUT" | cut -f1))"
