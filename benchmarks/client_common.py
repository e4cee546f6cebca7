"""Shared by the client benchmarks: the emulator over the real database, timing helpers."""
from __future__ import annotations

import contextlib
import json
import os
import statistics
import time
import urllib.request
from typing import Any, Callable, Dict, Iterator, List, Optional

from vehicledata.testing import DEMO_ACCOUNTS, Emulator

PREMIUM = DEMO_ACCOUNTS["premium"]


@contextlib.contextmanager
def emulator(**kw: Any) -> Iterator[Emulator]:
    """The emulator over the database built from VEHICLEDATA_SOURCES (or the default one)."""
    from vehicledata import dataset

    sources = os.environ.get("VEHICLEDATA_SOURCES")
    db = dataset.ensure_database(sources=sources) if sources else dataset.ensure_database()
    with Emulator(db=db, **kw) as emu:
        yield emu


def login(url: str) -> str:
    body = json.dumps({"api_token": PREMIUM["api_token"], "api_secret": PREMIUM["api_secret"]}).encode()
    req = urllib.request.Request(url + "/api/auth/login", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read().decode().strip()


def fetch(url: str, jwt: Optional[str] = None) -> bytes:
    headers = {"Authorization": "Bearer " + jwt} if jwt else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as resp:
        return resp.read()


def best_of(fn: Callable[[], Any], repeat: int = 7, number: int = 1) -> float:
    """Best (minimum) seconds per call over `repeat` rounds of `number` calls."""
    fn()
    times: List[float] = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t) / number)
    return min(times)


def report(title: str, rows: Dict[str, float], ours: str, unit: str = "ms", scale: float = 1000.0) -> None:
    print(f"\n{title}")
    base = rows[ours]
    for name, secs in rows.items():
        ratio = secs / base if base else float("nan")
        mark = "  (ours)" if name == ours else f"  {ratio:5.1f}x ours"
        print(f"  {name:<38} {secs * scale:10.2f} {unit}{mark}")


def median(xs: List[float]) -> float:
    return statistics.median(xs)
