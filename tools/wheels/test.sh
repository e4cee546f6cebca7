#!/usr/bin/env bash
# `make wheels-test`: each wheel of `make wheels` in a Debian root of the release that ships its
# Python (docs/installing.md, "The wheel matrix"):
#   tools/wheels/test.sh ROOTS DIST [ver:suite ...]     (default: 3.9:bullseye 3.11:bookworm 3.13:trixie 3.14:sid)
# In each root: a fresh venv; the wheel file installed alone (no index) and imported, show_versions();
# then pandas, pyarrow, numpy, polars, tqdm, pytest and openpyxl (the data extra's) from the package
# index, pinned to the newest releases for that Python (`pins` below; the developer venv tests the
# project's pins, `make test-floor` the extras' floors); smoke.py (README quick start against the
# bundled emulator, TLS against a self-signed loopback server); the data wheel installed, the quick
# start again from a fresh data home (real 2019 BMWs, no flag); the client's test suite against the
# bundled emulator. Writes DIST/wheels-test-<tag>.log; the last line of each says "PASSED" or why not.
# In the chroot, /proc (the emulator's $ORIGIN RPATH) and /dev/shm (POSIX semaphores: the dataset
# builder reads the Test Car List in worker processes) are mounted, as a real system has them.
set -euo pipefail
roots=$1; dist=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/../.." && pwd)
matrix=${*:-"3.9:bullseye 3.11:bookworm 3.13:trixie 3.14:sid"}
data=$(ls "$dist"/pyvehicledata_data-*-py3-none-any.whl)
# The newest releases with wheels for each Python (pip's resolution on 2026-11-26): Python 3.9's
# last pandas is 2.3, pyarrow 21, numpy 2.0, polars 1.36, pytest 8; numpy 2.5 needs Python >= 3.12.
pins() {
  case $1 in
    3.9) echo "pandas==2.3.3 pyarrow==21.0.0 numpy==2.0.2 polars==1.36.1 tqdm==4.70.1 pytest==8.4.2 openpyxl==3.1.5" ;;
    3.11) echo "pandas==3.1.1 pyarrow==26.0.1 numpy==2.4.6 polars==2.1.0 tqdm==4.70.1 pytest==9.2.0 openpyxl==3.1.5" ;;
    *) echo "pandas==3.1.1 pyarrow==26.0.1 numpy==2.5.5 polars==2.1.0 tqdm==4.70.1 pytest==9.2.0 openpyxl==3.1.5" ;;
  esac
}
status=0
for entry in $matrix; do
  ver=${entry%%:*}; suite=${entry##*:}; tag=cp${ver/./}
  wheel=$(ls "$dist"/pyvehicledata-*-$tag-$tag-manylinux_*.whl)
  root=$roots/$suite
  "$here/mkroot.sh" "$root" "$suite" python3 python3-venv python3-dev openssl
  work=$root/opt/vd-test
  rm -rf "$work" && mkdir -p "$work/wheels" "$work/src"
  cp "$wheel" "$data" "$work/wheels/"
  cp "$here/smoke.py" "$top/README.md" "$work/src/"
  (cd "$top" && tar -cf - tests/conftest.py tests/client pyproject.toml README.md docs/client.md docs/notebook.md \
    python/vehicledata/_core.pyi) | tar -xf - -C "$work/src"
  log=$dist/wheels-test-$tag.log
  echo "== $(basename "$wheel") in Debian $suite (python$ver)" | tee "$log"
  if chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/opt/vd-test/home LANG=C.UTF-8 \
      VEHICLEDATA_HOME=/opt/vd-test/home/nodata bash -euxc "
    cd /opt/vd-test
    mount -t proc proc /proc 2>/dev/null && trap 'umount /proc' EXIT || true
    mkdir -p /dev/shm && mount -t tmpfs -o size=64m shm /dev/shm 2>/dev/null && trap 'umount /dev/shm; umount /proc' EXIT || true
    python$ver -m venv venv
    venv/bin/pip install -q --no-index wheels/$(basename "$wheel")
    cd /tmp && /opt/vd-test/venv/bin/python -c 'import vehicledata as vd; vd.show_versions()'
    /opt/vd-test/venv/bin/pip install -q $(pins "$ver")
    /opt/vd-test/venv/bin/pip list --format=freeze
    VEHICLEDATA_OFFLINE=1 /opt/vd-test/venv/bin/python /opt/vd-test/src/smoke.py --readme /opt/vd-test/src/README.md
    /opt/vd-test/venv/bin/pip install -q --no-index --find-links /opt/vd-test/wheels 'pyvehicledata[data]'
    VEHICLEDATA_HOME=/opt/vd-test/home/data /opt/vd-test/venv/bin/python /opt/vd-test/src/smoke.py \
      --readme /opt/vd-test/src/README.md --expect-data
    cd /opt/vd-test/src
    VEHICLEDATA_HOME=/opt/vd-test/home/data \
    VEHICLEDATA_SOURCES=\$(/opt/vd-test/venv/bin/python -c 'import vehicledata_data as d; print(d.sources_dir())') \
      /opt/vd-test/venv/bin/python -m pytest -q -p no:cacheprovider tests/client \
      --ignore=tests/client/test_client_notebook.py
  " >>"$log" 2>&1; then echo "PASSED" | tee -a "$log"; else echo "FAILED (see $log)" | tee -a "$log"; status=1; fi
done
exit $status
