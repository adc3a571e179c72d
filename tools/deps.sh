#!/bin/sh
# Installs the Debian packages a target needs, only when some are missing.
#   tools/deps.sh build|check|demo|bench
# On a fresh Debian 12 machine `make demo` and `make check` are all the
# set-up: this script runs apt-get (as root, or through sudo) for them.
set -eu

build="gcc make pkg-config python3 libsnappy-dev libzstd-dev libbrotli-dev libyaml-dev zlib1g-dev libvulkan-dev libxcb1-dev"
check="$build bats apitrace xvfb xauth mesa-utils clang libclang-rt-14-dev time mesa-vulkan-drivers vulkan-tools vulkan-validationlayers glslang-tools glmark2-x11 gfxreconstruct imagemagick zstd ffmpeg mpv gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-bad"
demo="$build apitrace xvfb xauth mesa-vulkan-drivers vulkan-tools vulkan-validationlayers imagemagick"
bench="$check bc lz4 vkd3d-demos"

case "${1:-build}" in
build) want=$build ;;
check) want=$check ;;
demo) want=$demo ;;
bench) want=$bench ;;
*) echo "usage: tools/deps.sh build|check|demo|bench" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

echo "tracekit: installing Debian packages:$missing" >&2
if [ "$(id -u)" = 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "tracekit: missing packages:$missing (run as root or install them)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
