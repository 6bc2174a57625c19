#!/bin/sh
# tools/deps.sh — find the system packages GeoTrain needs and install the
# missing ones with apt-get (with sudo when not root). Called by `make deps`
# (and so by every build); prints the exact command when it cannot install.
set -u

missing=""
need_pkg() { # pkg-config name, Debian package
    pkg-config --exists "$1" 2>/dev/null || missing="$missing $2"
}
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
need_pkg gsl libgsl-dev
need_pkg jansson libjansson-dev
need_pkg zlib zlib1g-dev
need_pkg cmocka libcmocka-dev
command -v gnuplot >/dev/null 2>&1 || missing="$missing gnuplot-nox"
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
# Only for `make MPI=1` (make exports MPI from its command line): Open MPI's
# compiler wrapper (mpicc) and launcher (mpirun). Plain builds never need MPI.
if [ "${MPI:-0}" = 1 ]; then
    command -v mpicc >/dev/null 2>&1 || missing="$missing libopenmpi-dev"
    command -v mpirun >/dev/null 2>&1 || missing="$missing openmpi-bin"
fi
case "${CC:-cc}" in
    *clang*) command -v clang >/dev/null 2>&1 || missing="$missing clang"
             ls /usr/lib/llvm-*/lib/libomp.so >/dev/null 2>&1 || missing="$missing libomp-dev" ;;
esac

[ -z "$missing" ] && exit 0

echo "geotrain: installing missing packages:$missing"
if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else SUDO="none"; fi
if ! command -v apt-get >/dev/null 2>&1 || [ "$SUDO" = none ]; then
    echo "geotrain: cannot install automatically; run:" >&2
    echo "    sudo apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null 2>&1 || true
if ! $SUDO apt-get install -y -qq $missing >/dev/null; then
    echo "geotrain: apt-get failed; run:  sudo apt-get install -y$missing" >&2
    exit 1
fi
echo "geotrain: packages installed"
