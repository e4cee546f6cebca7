#!/usr/bin/env python3
"""Writes or checks the golden VIN file, tests/data/vin_golden.jsonl.gz: VINs with their full
answers from the offline decoder, so that any change to the decoder's fast path (the batch decoder
behind ``Decoder.decode_many``) or to its reference path (``Decoder.decode``) is caught by
``make test`` (tests/client/test_vin_golden.py), not by a hand comparison of two builds.

The VINs: every VIN of benchmarks/data/vins.tsv (vPIC's answers for a public test set) and four
variants of each with 1-3 of positions 4-17 replaced (fixed seed; the check digit kept a digit or
X), so invalid, unknown-WMI, no-schema and check-digit answers are in the file too, plus a few
malformed inputs. Each line: ``{"vin", "row", "answer"}``: ``row`` the ``decode_many`` row,
``answer`` ``decode``'s (kind, message, record). Model-year codes are read against CURRENT_YEAR
(the answers would move on 1 January otherwise). Only vPIC-derived values are kept: the catalogue's
trim ids (``trim_id``, ``trims``) change with every catalogue rule and are left out.

    tools/vin_golden.py --write [--db DB]   # after a deliberate change of the decoder's answers
    tools/vin_golden.py [--db DB]           # compare; prints the first differences, exit 1 on any
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "vin_golden.jsonl.gz"
CURRENT_YEAR = 2026
MALFORMED = ["", "1HGCM82633A00435", "1HGCM82633A0043521", " 1hgcm82633a004352 ", "1HGCM82633A00435I",
             "1HGCM8263-A004352", "AAA00000000000000", "AAA000000A0000000", "\u00e91HGCM82633A00435"]
CATALOGUE = ("trim_id", "trim_ids")


def vins() -> List[str]:
    sys.path.insert(0, str(ROOT / "tools"))
    import vin_compare

    base = [line.split("\t")[0].strip().upper() for line in (ROOT / "benchmarks/data/vins.tsv").read_text().splitlines()
            if line.strip() and not line.startswith(("#", "vin\t"))]
    return base + vin_compare.variants(base, 4, seed=40) + MALFORMED


def answers(db: Optional[str], vin_list: List[str], threads: int = 2) -> Iterator[Dict[str, Any]]:
    """The decoder's answers for vin_list, in the golden file's line format."""
    import pyarrow as pa

    import vehicledata as vd

    decoder = vd.vin.Decoder(db)
    core = decoder._core  # the current_year knob is the core's only (the public methods read today's year)
    array = pa.array(vin_list, pa.string())
    schema_capsule, array_capsule = array.__arrow_c_array__()
    pages = core.decode_arrow(schema_capsule, array_capsule, threads, current_year=CURRENT_YEAR)
    rows = pa.Table.from_batches([pa.record_batch(p) for p in pages]).to_pylist()
    assert len(rows) == len(vin_list), (len(rows), len(vin_list))
    for vin, row in zip(vin_list, rows):
        kind, message, record = core.decode(vin, False, current_year=CURRENT_YEAR)
        yield {"vin": vin, "row": {k: v for k, v in row.items() if k not in CATALOGUE},
               "answer": [kind, message, None if record is None else {k: v for k, v in record.items() if k not in CATALOGUE}]}


def read_golden(path: Path = GOLDEN) -> List[Dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def differences(golden: List[Dict[str, Any]], got: List[Dict[str, Any]], limit: int = 5) -> List[str]:
    """Up to `limit` lines naming the VINs whose answers differ (and a count line when there are more)."""
    out, count = [], 0
    if len(golden) != len(got):
        out.append(f"{len(got)} answers for {len(golden)} golden VINs")
    for want, have in zip(golden, got):
        for part in ("row", "answer"):
            if want[part] != have[part]:
                count += 1
                if count <= limit:
                    w, h = json.dumps(want[part], sort_keys=True), json.dumps(have[part], sort_keys=True)
                    out.append(f"{want['vin']!r} {part}:\n  golden: {w[:400]}\n  now:    {h[:400]}")
    if count > limit:
        out.append(f"... {count} differences in all")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="write the golden file from this build's decoder")
    ap.add_argument("--db", help="vehicledata.db with its vPIC file (default: the emulator's)")
    args = ap.parse_args()
    if args.write:
        lines = list(answers(args.db, vins()))
        with gzip.GzipFile(GOLDEN, "wb", mtime=0) as f:
            for line in lines:
                f.write((json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
        print(f"wrote {GOLDEN.relative_to(ROOT)}: {len(lines)} VINs, {GOLDEN.stat().st_size:,} bytes")
        return 0
    golden = read_golden()
    diff = differences(golden, list(answers(args.db, [g["vin"] for g in golden])))
    print("\n".join(diff) if diff else f"identical: {len(golden)} VINs")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
