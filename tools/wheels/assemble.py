#!/usr/bin/env python3
"""Assemble a platform wheel of vehicledata from binaries built in a Debian root (tools/wheels/build.sh).

    python tools/wheels/assemble.py --core _core.so --emulator vehicledata-emulator --tag cp311 --out DIR

The package's Python files come from python/vehicledata, the metadata (METADATA, entry_points.txt)
from scikit-build-core's own prepare_metadata_for_build_wheel (so it matches what `pip wheel .`
writes), the extension is renamed to the interpreter's suffix. The result is a `linux_x86_64` wheel
for `auditwheel repair` to bundle the libraries and tag. Reproducible: fixed timestamps, sorted.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import List, Tuple

ROOT = Path(__file__).resolve().parents[2]
EPOCH = (2026, 1, 1, 0, 0, 0)


def metadata() -> Tuple[str, List[Tuple[str, bytes]]]:
    from scikit_build_core.build import prepare_metadata_for_build_wheel
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(ROOT)
        try:
            name = prepare_metadata_for_build_wheel(tmp)
        finally:
            os.chdir(cwd)
        folder = Path(tmp) / name
        files = [(f"{name}/{p.relative_to(folder).as_posix()}", p.read_bytes())
                 for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in ("RECORD", "WHEEL")]
    return name, files


def build(core: Path, emulator: Path, tag: str, out: Path) -> Path:
    info, files = metadata()
    dist = info[: -len(".dist-info")]
    pkg = ROOT / "python" / "vehicledata"
    entries: List[Tuple[str, bytes, int]] = []
    for p in sorted(pkg.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc" and not p.name.startswith("_core."):
            entries.append((f"vehicledata/{p.relative_to(pkg).as_posix()}", p.read_bytes(), 0o644))
    suffix = f".cpython-{tag[2:]}-x86_64-linux-gnu.so"
    entries.append((f"vehicledata/_core{suffix}", core.read_bytes(), 0o755))
    entries.append(("vehicledata/bin/vehicledata-emulator", emulator.read_bytes(), 0o755))
    entries += [(n, d, 0o644) for n, d in files]
    wheel_tag = f"{tag}-{tag}-linux_x86_64"
    entries.append((f"{info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: vehicledata tools/wheels/assemble.py\n"
                                      f"Root-Is-Purelib: false\nTag: {wheel_tag}\n").encode(), 0o644))
    record = io.StringIO()
    for name, data, _ in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.write(f"{name},sha256={digest},{len(data)}\n")
    record.write(f"{info}/RECORD,,\n")
    entries.append((f"{info}/RECORD", record.getvalue().encode(), 0o644))
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{dist}-{wheel_tag}.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in entries:
            zi = zipfile.ZipInfo(name, EPOCH)
            zi.external_attr = mode << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data, compresslevel=9)
    return wheel


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--core", required=True, type=Path)
    ap.add_argument("--emulator", required=True, type=Path)
    ap.add_argument("--tag", required=True, help="cp39, cp311, cp313, cp314")
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args(argv)
    print(build(args.core, args.emulator, args.tag, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
