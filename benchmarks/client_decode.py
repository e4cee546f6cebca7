"""One 1000-record trims page from bytes to a pandas DataFrame: ours vs json/orjson + pd.DataFrame.

    PYTHONPATH=python:BUILD/pkg python benchmarks/client_decode.py

Target (issue 5): at least 6x faster than json.loads + pd.DataFrame(records) and
at least 2x faster than orjson.loads + pd.DataFrame(records).
"""
from __future__ import annotations

import json
import sys

import orjson
import pandas as pd

from vehicledata import frames

from client_common import best_of, emulator, fetch, login, report


def main() -> int:
    with emulator() as emu:
        body = fetch(emu.url + "/api/trims/v2?limit=1000", login(emu.url))
    ours = frames.frame_from_bytes(body, "trim")
    ref = pd.DataFrame(json.loads(body)["data"])
    assert len(ours) == len(ref) == 1000 and list(ours.columns) == list(ref.columns)
    assert ours["id"].tolist() == ref["id"].tolist()
    rows = {
        "vehicledata (simdjson -> columns -> pandas)": best_of(lambda: frames.frame_from_bytes(body, "trim"), 15, 20),
        "json.loads + pd.DataFrame(records)": best_of(lambda: pd.DataFrame(json.loads(body)["data"]), 15, 5),
        "orjson.loads + pd.DataFrame(records)": best_of(lambda: pd.DataFrame(orjson.loads(body)["data"]), 15, 5),
    }
    report(f"1000-record trims page ({len(body) / 1024:.0f} KiB) -> DataFrame, best per call",
           rows, "vehicledata (simdjson -> columns -> pandas)")
    ours_t = rows["vehicledata (simdjson -> columns -> pandas)"]
    print(f"  ratio vs json:   {rows['json.loads + pd.DataFrame(records)'] / ours_t:.1f}x (target >= 6)")
    print(f"  ratio vs orjson: {rows['orjson.loads + pd.DataFrame(records)'] / ours_t:.1f}x (target >= 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
