#!/usr/bin/env bash
# cibuildwheel's before-all (pyproject [tool.cibuildwheel]; configured for a real CI, never run on
# this project's machine, which uses tools/wheels/root_deps.sh in a Debian root instead).
#   ci_deps.sh PREFIX [curl-only]
# The same libraries as the Debian build, from their release tarballs: simdjson 3.0.1 and
# cpp-httplib 0.11.4 (static), and the lean libcurl 7.88.1 (HTTP/1.1 + HTTP/2, OpenSSL, zlib).
set -euo pipefail
prefix=$1; only=${2:-}
if command -v dnf >/dev/null; then     # manylinux_2_28 (AlmaLinux 8)
  dnf install -y -q openssl-devel zlib-devel sqlite-devel libnghttp2-devel minizip-devel python3 cmake curl
elif command -v apk >/dev/null; then   # musllinux_1_2 (Alpine)
  apk add --no-cache openssl-dev zlib-dev sqlite-dev nghttp2-dev minizip-dev python3 cmake curl
fi
work=$(mktemp -d) && cd "$work"
get() { curl -fsSL "$1" | tar -xz; }
if [ "$only" != curl-only ]; then
  get https://github.com/simdjson/simdjson/archive/refs/tags/v3.0.1.tar.gz
  cmake -S simdjson-3.0.1 -B b-simdjson -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DSIMDJSON_DEVELOPER_MODE=OFF
  cmake --build b-simdjson -j2 && cmake --install b-simdjson
  get https://github.com/yhirose/cpp-httplib/archive/refs/tags/v0.11.4.tar.gz
  (cd cpp-httplib-0.11.4 && python3 ./split.py -o "$work/httplib")
  c++ -O2 -fPIC -std=c++17 -DCPPHTTPLIB_OPENSSL_SUPPORT -DCPPHTTPLIB_ZLIB_SUPPORT -c "$work/httplib/httplib.cc" -o httplib.o
  mkdir -p "$prefix/lib/pkgconfig" "$prefix/include" && ar rcs "$prefix/lib/libcpp-httplib.a" httplib.o
  cp "$work/httplib/httplib.h" "$prefix/include/"
  printf '%s\n' "prefix=$prefix" 'Name: cpp-httplib' 'Description: cpp-httplib (static)' 'Version: 0.11.4' \
    'Requires: openssl, zlib' 'Libs: -L${prefix}/lib -lcpp-httplib -pthread' \
    'Cflags: -I${prefix}/include -DCPPHTTPLIB_OPENSSL_SUPPORT -DCPPHTTPLIB_ZLIB_SUPPORT' \
    > "$prefix/lib/pkgconfig/cpp-httplib.pc"
fi
get https://curl.se/download/curl-7.88.1.tar.gz
cmake -S curl-7.88.1 -B b-curl -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
  -DBUILD_SHARED_LIBS=ON -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DHTTP_ONLY=ON -DCURL_USE_OPENSSL=ON \
  -DUSE_NGHTTP2=ON -DCURL_ZLIB=ON -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DCURL_USE_LIBSSH2=OFF -DUSE_LIBIDN2=OFF \
  -DCURL_USE_GSSAPI=OFF -DCURL_DISABLE_LDAP=ON -DENABLE_MANUAL=OFF -DCURL_DISABLE_NTLM=ON
cmake --build b-curl -j2 && cmake --install b-curl
