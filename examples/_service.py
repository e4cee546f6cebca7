"""Shared by the examples: the service to talk to.

With VEHICLEDATA_BASE_URL set, the examples use it (and VEHICLEDATA_API_TOKEN /
VEHICLEDATA_API_SECRET).  Without it, they start the local emulator with its
premium demo account, so every example runs offline.
"""
from __future__ import annotations

import contextlib
import os
from typing import Iterator

import vehicledata as vd


@contextlib.contextmanager
def client(**options: object) -> Iterator[vd.Client]:
    if os.environ.get("VEHICLEDATA_BASE_URL"):
        with vd.Client(**options) as api:  # type: ignore[arg-type]
            yield api
        return
    from vehicledata.testing import DEMO_ACCOUNTS, Emulator

    account = DEMO_ACCOUNTS["premium"]
    with Emulator() as emu:
        options.setdefault("rate_limit", None)
        with vd.Client(api_token=account["api_token"], api_secret=account["api_secret"], base_url=emu.url,
                       **options) as api:  # type: ignore[arg-type]
            yield api
