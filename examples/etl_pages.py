"""ETL with bounded memory: one DataFrame per page, resumable from a page number."""
from __future__ import annotations

import sys
from pathlib import Path

from _service import client

out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "engines-by-page")
start = int(sys.argv[2]) if len(sys.argv) > 2 else 1
out_dir.mkdir(parents=True, exist_ok=True)
with client() as api:
    pager = api.engines.search(year=2019, limit=500, start_page=start)
    for number, frame in enumerate(pager.iter_pandas(), start=start):
        frame.to_csv(out_dir / f"page-{number:04d}.csv", index=False)
        print(f"page {number}/{pager.page_count}: {len(frame)} engines")
