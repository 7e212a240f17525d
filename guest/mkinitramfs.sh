#!/bin/sh
# Build the guest initramfs: busybox-static, fio, blktrace and blkparse with
# the shared libraries they need, copied from this machine's packages, udevd
# with guest/udev's rules (from Debian's udev package, downloaded, not
# installed here: its scripts would trigger this machine's devices), and
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

# Debian's udev package, fetched once into build/debs.
udev_deb() {
	deb=$(ls "$BUILD"/debs/udev_*.deb 2>/dev/null | tail -n 1)
	if [ -z "$deb" ]; then
		mkdir -p "$BUILD/debs"
		# With stale package lists the download fails: update, try again.
		(cd "$BUILD/debs" && { apt-get download -q udev >&2 ||
			{ apt-get update -q >&2 && apt-get download -q udev >&2; }; }) ||
			{ echo "guest: cannot download Debian's udev package" >&2; exit 1; }
		deb=$(ls "$BUILD"/debs/udev_*.deb | tail -n 1)
	fi
	echo "$deb"
}

stamp() {
	{
		cat "$TOP/guest/init" "$TOP/guest/stress.sh" "$TOP/guest/overhead.sh" "$0"
		cat "$TOP"/guest/udev/*.rules
		basename "$(udev_deb)"
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
# udevadm is also systemd-udevd, by the name it is called with.
rm -rf "$BUILD/udev.pkg"
dpkg-deb -x "$(udev_deb)" "$BUILD/udev.pkg"
mkdir -p "$root/lib/systemd" "$root/etc/udev/rules.d" "$root/run"
cp "$BUILD/udev.pkg/bin/udevadm" "$root/bin/udevadm"
ln -s /bin/udevadm "$root/lib/systemd/systemd-udevd"
cp "$TOP"/guest/udev/*.rules "$root/etc/udev/rules.d/"
# Every shared library the binaries load, at the path ldd resolved.
for lib in $(ldd $BINARIES "$root/bin/udevadm" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | sort -u); do
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
