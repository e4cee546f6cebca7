"""Crawl every trim into one DataFrame (pages fetched concurrently inside the rate limit)."""
from __future__ import annotations

import sys
import time

from _service import client

out = sys.argv[1] if len(sys.argv) > 1 else "trims.parquet"
with client(progress=True) as api:
    started = time.perf_counter()
    df = api.trims.search(limit=1000).to_pandas()
    elapsed = time.perf_counter() - started
    print(f"{len(df)} trims in {elapsed:.2f} s; {api.stats()['requests']} requests")
    print(df.dtypes.to_string())
    df.to_parquet(out, index=False)
    print(f"written to {out}")
