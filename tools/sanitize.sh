#!/usr/bin/env bash
# ASan+UBSan build of core, client, emulator, their C++ tests and the Python module, in its own
# build dir; then ctest and the Python suite against it.
#   tools/sanitize.sh BUILD_DIR [pytest arguments...]      (default: tests/ less no_sanitize)
# The Python process runs with the ASan runtime preloaded (LD_PRELOAD) and detect_leaks=0 (the
# interpreter's own allocations are not ours); the emulator and vd_tests run with leak detection.
# Any sanitizer report fails the run (halt_on_error / abort_on_error).
set -euo pipefail
build=${1:?build dir}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
# Absolute: tests run snippets, notebooks and pytest subprocesses in other directories, and they
# find the sanitized emulator through VEHICLEDATA_EMULATOR_BIN below.
case $build in /*) ;; *) build=$PWD/$build ;; esac
py=${VPY:-$root/.venv/bin/python}
pybind11_dir=$("$py" -c 'import pybind11; print(pybind11.get_cmake_dir())')
cmake -S "$root" -B "$build" -DVEHICLEDATA_SANITIZE=ON -DBUILD_TESTING=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPython_EXECUTABLE="$py" -Dpybind11_DIR="$pybind11_dir" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j2
# A package tree the suite imports: the Python sources plus the sanitized _core and emulator.
site="$build/site"
rm -rf "$site" && mkdir -p "$site"
cp -r "$root/python/vehicledata" "$site/"
cp -r "$build/pkg/vehicledata/." "$site/vehicledata/"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
ctest --test-dir "$build" --output-on-failure -j2
asan=$(g++ -print-file-name=libasan.so)
ubsan=$(g++ -print-file-name=libubsan.so)
export VEHICLEDATA_EMULATOR_BIN="$site/vehicledata/bin/vehicledata-emulator"
# The emulator runs as a child of the Python process: it inherits LD_PRELOAD (harmless: it is
# linked against the same runtime) and detect_leaks=0 from here.
# Without arguments: the suite as `make test` runs it, less the modules marked no_sanitize (pure
# Python under test, or C++ paths other tests already drive: tests/conftest.py NO_SANITIZE and
# docs/reliability.md "Sanitizers"); the wheel matrix's checks need the wheels of `make wheels` and
# are run by `make wheels-test`.
if [ $# -eq 0 ]; then set -- -m "not wheels and not no_sanitize" "$root/tests"; fi
ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 LD_PRELOAD="$asan $ubsan" PYTHONPATH="$site" \
  "$py" -m pytest -q -p no:cacheprovider "$@"
