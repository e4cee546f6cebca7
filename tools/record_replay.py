#!/usr/bin/env python3
"""Records tests/data/replay_makes.jsonl, the answers tests/client/test_replay_*.py replay with no
dataset and no emulator (vehicledata.testing.ReplayServer): the emulator's makes search as the
premium account sees it, 20 a page (8 pages), recorded through vehicledata.testing.Recorder while
the sync and the async client walk it.

    tools/record_replay.py --write [--db DB]   # record again (after a change of the emulator's answers)
    tools/record_replay.py [--db DB]           # record into a temporary file and compare: exit 1 on a difference

Needs the built dataset (the emulator's database, ``vehicledata.dataset.ensure_database`` unless
--db) and PYTHONPATH=python with the core built or copied in.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any, List, Optional

ROOT = Path(__file__).resolve().parent.parent
RECORDING = ROOT / "tests" / "data" / "replay_makes.jsonl"
NOTE = "the emulator's makes search (premium, limit=20); record again with tools/record_replay.py --write"
PAGE = 20


def walk(url: str) -> List[Any]:
    """What the tests ask, sync then async: every page of the makes search, 20 a page."""
    import vehicledata as vd
    from vehicledata.testing import DEMO_ACCOUNTS

    premium = DEMO_ACCOUNTS["premium"]
    options = dict(api_token=premium["api_token"], api_secret=premium["api_secret"], rate_limit=None)
    with vd.Client(base_url=url, **options) as api:
        ids = [r.id for r in api.makes.search(limit=PAGE)]

    async def walk_async() -> List[Any]:
        async with vd.AsyncClient(base_url=url, **options) as aapi:
            return [r.id async for r in aapi.makes.search(limit=PAGE)]

    if asyncio.run(walk_async()) != ids:
        raise SystemExit("the sync and the async client read different records from the emulator")
    return ids


def record(out: Path, db: Optional[str]) -> int:
    from vehicledata.testing import Emulator, Recorder

    with Emulator(db=db) as emu, Recorder(emu.url) as recorder:
        ids = walk(recorder.url)
        recorder.save(out, NOTE)
    pages = len(recorder.answers)
    print(f"{out}: {pages} answers, {len(ids)} records, {out.stat().st_size} bytes")
    return pages


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {RECORDING.relative_to(ROOT)}")
    parser.add_argument("--db", default=None, help="the emulator's database (default: the built dataset)")
    args = parser.parse_args(argv)
    if args.write:
        record(RECORDING, args.db)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / RECORDING.name
        record(fresh, args.db)
        if fresh.read_bytes() == RECORDING.read_bytes():
            print(f"{RECORDING.relative_to(ROOT)} is what the emulator answers")
            return 0
        from vehicledata.testing import load_answers

        old = {(a.method, a.target): a for a in load_answers(RECORDING)}
        new = {(a.method, a.target): a for a in load_answers(fresh)}
        for key in sorted(set(old) | set(new)):
            if key not in old or key not in new or old[key] != new[key]:
                what = "added" if key not in old else "gone" if key not in new else "changed"
                print(f"differs: {' '.join(key)} ({what})")
        return 1


if __name__ == "__main__":
    sys.exit(main())
