#!/usr/bin/env bash
# Inside the Debian 11 build root (tools/wheels/build.sh runs it with chroot): the C/C++ libraries
# the wheels bundle that bullseye lacks, ships too old, or ships too fat, built from Debian's source
# packages of bookworm (the versions the project is developed against) into /opt/vd:
#   simdjson 3.0.1   static, -fPIC (linked into _core and the emulator: no bundled library)
#   cpp-httplib      0.11.4, compiled once (its split.py), static, OpenSSL + zlib
#   curl 7.88.1      a lean shared libcurl: HTTP/1.1 + HTTP/2 (nghttp2), OpenSSL, zlib, nothing
#                    else (HTTP_ONLY: no FTP, LDAP, SSH, RTMP, Kerberos, IDN, PSL, brotli, zstd)
# OpenSSL 1.1.1, nghttp2, zlib, SQLite and minizip are bullseye's (Debian security-maintained).
# pybind11 and cmake come from PyPI (pinned). Each step is skipped when its result exists.
set -euo pipefail
PREFIX=/opt/vd
SRC=/opt/vd-src
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$PREFIX/lib/pkgconfig" "$PREFIX/include" "$SRC"
if [ ! -e /etc/apt/sources.list.d/bookworm-src.list ]; then
  echo "deb-src http://deb.debian.org/debian bookworm main" > /etc/apt/sources.list.d/bookworm-src.list
  echo "deb-src http://deb.debian.org/debian-security bookworm-security main" >> /etc/apt/sources.list.d/bookworm-src.list
  apt-get update -qq
fi
for tool in ccache openssl; do command -v $tool >/dev/null || apt-get install -y -qq $tool >/dev/null; done
cd "$SRC"

if [ ! -e "$PREFIX/lib/libsimdjson.a" ]; then
  [ -d simdjson-3.0.1 ] || apt-get source -qq simdjson/bookworm
  cmake -S simdjson-3.0.1 -B build-simdjson -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DSIMDJSON_DEVELOPER_MODE=OFF >/dev/null
  cmake --build build-simdjson -j2 && cmake --install build-simdjson >/dev/null
fi

if [ ! -e "$PREFIX/lib/libcpp-httplib.a" ]; then
  [ -d cpp-httplib-0.11.4* ] || apt-get source -qq cpp-httplib/bookworm
  dir=$(ls -d cpp-httplib-0.11.4*/ | head -1)
  (cd "$dir" && python3 ./split.py -o "$SRC/httplib-split" >/dev/null)
  flags="-O2 -fPIC -std=c++17 -DCPPHTTPLIB_OPENSSL_SUPPORT -DCPPHTTPLIB_ZLIB_SUPPORT"
  g++ $flags -I"$SRC/httplib-split" -c "$SRC/httplib-split/httplib.cc" -o "$SRC/httplib-split/httplib.o"
  ar rcs "$PREFIX/lib/libcpp-httplib.a" "$SRC/httplib-split/httplib.o"
  cp "$SRC/httplib-split/httplib.h" "$PREFIX/include/"
  cat > "$PREFIX/lib/pkgconfig/cpp-httplib.pc" <<PC
prefix=$PREFIX
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: cpp-httplib
Description: A C++ HTTP/HTTPS server and client library (static, OpenSSL and zlib)
Version: 0.11.4
Requires: openssl >= 1.1.1, zlib
Libs: -L\${libdir} -lcpp-httplib -pthread
Cflags: -I\${includedir} -DCPPHTTPLIB_OPENSSL_SUPPORT -DCPPHTTPLIB_ZLIB_SUPPORT
PC
fi

if [ ! -e "$PREFIX/lib/libcurl.so" ]; then
  [ -d curl-7.88.1 ] || apt-get source -qq curl/bookworm
  cmake -S curl-7.88.1 -B build-curl -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=ON -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF \
    -DHTTP_ONLY=ON -DCURL_USE_OPENSSL=ON -DUSE_NGHTTP2=ON -DCURL_ZLIB=ON -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF \
    -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF -DUSE_LIBIDN2=OFF -DCURL_USE_GSSAPI=OFF -DUSE_LIBRTMP=OFF \
    -DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON -DENABLE_MANUAL=OFF -DCURL_DISABLE_NTLM=ON \
    -DCURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt -DCURL_CA_PATH=none -DENABLE_THREADED_RESOLVER=ON \
    >/dev/null
  cmake --build build-curl -j2 && cmake --install build-curl >/dev/null
fi
ls -la "$PREFIX/lib"
