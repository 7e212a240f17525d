#!/bin/sh
# Install the Debian packages the project needs, only those missing.
# Idempotent: on a machine that has them all it prints one line and exits.
set -eu

PACKAGES="linux-source-6.1 gcc make libc6-dev flex bison bc libelf-dev
libssl-dev cpio xz-utils qemu-system-x86 fio blktrace gnuplot-nox
python3 python3-pandas python3-scipy busybox-static
libkmod2 libacl1 libblkid1 libcap2 libselinux1"
# The guest's udevd comes from Debian's udev package, downloaded by
# guest/mkinitramfs.sh and not installed here.
# make overhead PROFILE=1 samples the guest with perf.
if [ "${PROFILE:-}" ]; then
	PACKAGES="$PACKAGES linux-perf"
fi

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi

echo "deps: installing$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to run apt-get (missing:$missing)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086  # the list is meant to split
apt-get install -y -q --no-install-recommends $missing
