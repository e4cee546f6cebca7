#!/usr/bin/env bash
# Make (once) a Debian root with debootstrap for building or testing wheels (docs/installing.md).
#   tools/wheels/mkroot.sh DIR SUITE [extra Debian packages...]
# The root gets deb-src lines (so `apt-get source` works inside it), /etc/resolv.conf and the
# host's extra CA certificates (/usr/local/share/ca-certificates: a proxy's, if the host reaches
# the package registries through one), synced on every call; a finished root is marked by
# DIR/.vd-ready and is not rebuilt.
set -euo pipefail
dir=$1; suite=$2; shift 2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
sync_host() {
  cp /etc/resolv.conf "$dir/etc/resolv.conf"
  if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1 &&
     ! cmp -s <(cat /usr/local/share/ca-certificates/*.crt) <(cat "$dir"/usr/local/share/ca-certificates/*.crt 2>/dev/null); then
    mkdir -p "$dir/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$dir/usr/local/share/ca-certificates/"
    chroot "$dir" update-ca-certificates >/dev/null 2>&1
  fi
}
if [ -e "$dir/.vd-ready" ]; then sync_host; exit 0; fi
command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
rm -rf "$dir" && mkdir -p "$dir"
include=ca-certificates
[ $# -gt 0 ] && include="$include,$(IFS=,; echo "$*")"
debootstrap --variant=minbase --include="$include" "$suite" "$dir" "$mirror"
printf 'deb %s %s main\ndeb-src %s %s main\n' "$mirror" "$suite" "$mirror" "$suite" > "$dir/etc/apt/sources.list"
sync_host
touch "$dir/.vd-ready"
