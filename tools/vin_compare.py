#!/usr/bin/env python3
"""Compares two builds of the VIN path answer for answer, to prove an optimisation changes nothing.

VINs: benchmarks/data/vins.tsv, every 17-character VIN the tests and the fuzz sources name, and 8
variants of each vins.tsv VIN with 1-3 positions (4-17) replaced at random (fixed seed: error
codes 1, 400, no-schema and unknown-WMI answers, formula keys on other digits).

    # the decoder: every decoded element (vehicledata-vin-decode --all) at two current years
    tools/vin_compare.py decoder --db DB OLD/vehicledata-vin-decode NEW/vehicledata-vin-decode
    # GET /api/vin/{vin}: status and exact body, 5 account/parameter variants, each asked twice
    # (the second answer comes from the caches)
    tools/vin_compare.py http --db DB OLD/vehicledata-emulator NEW/vehicledata-emulator [--limit 6000]

Prints the first differences and exits 1 when the answers differ.
"""
from __future__ import annotations

import argparse
import glob
import http.client
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parent.parent
ALPHABET = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ"


def vins() -> List[str]:
    base = [line.split("\t")[0].strip().upper() for line in (ROOT / "benchmarks/data/vins.tsv").read_text().splitlines()
            if line.strip() and not line.startswith(("#", "vin\t"))]
    named = set()
    for f in glob.glob(str(ROOT / "tests/**/*.py"), recursive=True) + glob.glob(str(ROOT / "cpp/**/*.cpp"), recursive=True):
        named.update(re.findall(r"\b[0-9A-HJ-NPR-Z]{17}\b", Path(f).read_text(errors="ignore")))
    return base + sorted(named) + variants(base, 8, seed=12)


def variants(base: List[str], each: int, seed: int) -> List[str]:
    """`each` variants of every VIN of `base`, 1-3 of positions 4-17 replaced at random (the check
    digit kept a digit or X), from a fixed seed: error codes 1, 400, no-schema and unknown-WMI
    answers, formula keys on other digits. Also tools/vin_golden.py's."""
    rng = random.Random(seed)
    out = []
    for v in base:
        for _ in range(each):
            chars = list(v)
            for _ in range(rng.choice([1, 1, 2, 3])):
                chars[rng.randrange(3, 17)] = rng.choice(ALPHABET)
            if chars[8] not in "0123456789X":
                chars[8] = rng.choice("0123456789X")
            out.append("".join(chars))
    return out


def decoder_answers(tool: str, db: str, year: int, text: str) -> List[str]:
    out = subprocess.run([tool, "--db", db, "--all", "--year", str(year)], input=text, capture_output=True, text=True,
                         check=True)
    return out.stdout.splitlines()


def http_answers(exe: str, db: str, vin_list: List[str]) -> List[str]:
    p = subprocess.Popen([exe, "--db", db, "--rate-limit", "100000000", "--threads", "2"], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        host, port = p.stdout.readline().split()[-1].split("//")[1].split(":")
        con = http.client.HTTPConnection(host, int(port), timeout=60)
        jwt = {}
        for kind in ("premium", "free"):
            body = json.dumps({"api_token": f"demo-{kind}-token", "api_secret": f"demo-{kind}-secret"})
            con.request("POST", "/api/auth/login", body=body, headers={"Content-Type": "application/json"})
            jwt[kind] = con.getresponse().read().decode().strip()
        variants = [("premium", ""), ("premium", "?verbose=yes"), ("premium", "?all_trims=yes&verbose=yes"),
                    ("free", ""), ("free", "?all_trims=yes")]
        lines = []
        for rep in range(2):
            for v in vin_list:
                for who, q in variants:
                    con.request("GET", f"/api/vin/{v}{q}", headers={"Authorization": "Bearer " + jwt[who]})
                    r = con.getresponse()
                    lines.append(f"{rep} {v} {who}{q} {r.status} {r.read().decode()}")
        return lines
    finally:
        p.terminate()
        p.wait()


def report(a: List[str], b: List[str], what: str) -> bool:
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    if len(a) != len(b) or diff:
        print(f"{what}: DIFFER ({len(diff)} of {len(a)}; {len(a)} vs {len(b)} answers)")
        for x, y in diff[:5]:
            print("  old:", x[:300], "\n  new:", y[:300])
        return False
    print(f"{what}: identical ({len(a)} answers)")
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["decoder", "http"])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--db", required=True, help="vehicledata.db with its vPIC tables")
    ap.add_argument("--limit", type=int, default=6000, help="http: the first N VINs")
    args = ap.parse_args()
    vin_list = vins()
    ok = True
    if args.mode == "decoder":
        text = "\n".join(vin_list) + "\n"
        for year in (2026, 2013):
            ok &= report(decoder_answers(args.old, args.db, year, text), decoder_answers(args.new, args.db, year, text),
                         f"decoder, current year {year}, {len(vin_list)} VINs")
    else:
        ok &= report(http_answers(args.old, args.db, vin_list[:args.limit]),
                     http_answers(args.new, args.db, vin_list[:args.limit]), "GET /api/vin")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
