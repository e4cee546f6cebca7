"""Download the bulk data feed (resumable, verified) and load its CSVs."""
from __future__ import annotations

import sys

from _service import client

target = sys.argv[1] if len(sys.argv) > 1 else "vehicledata-feed.zip"
with client() as api:
    print("feed last updated:", api.data_feed.last_updated())
    path = api.data_feed.download(target, progress=True)
    frames = api.data_feed.load(path)
    for name, frame in frames.items():
        print(f"{name:>16}: {len(frame):>8} rows, {len(frame.columns)} columns")
