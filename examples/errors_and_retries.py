"""Errors carry status, URL, the server's exception name and message; retries are logged at INFO."""
from __future__ import annotations

import logging

import vehicledata as vd

from _service import client

logging.basicConfig(level=logging.INFO, format="%(name)s %(levelname)s %(message)s")

with client(retry=vd.Retry(total=5, backoff_factor=0.2, max_wait=30)) as api:
    try:
        api.trims.get(987654321)
    except vd.NotFoundError as exc:
        print(f"{type(exc).__name__}: status={exc.status} exception={exc.exception} message={exc.message!r}")
    try:
        api.get_json("/api/trims/v2", year="next year")  # a raw GET, wrong on purpose: the server's 400
    except vd.BadRequestError as exc:
        print(f"{type(exc).__name__}: {exc}")
    try:
        api.trims.search(year="2020")  # type: ignore[arg-type]  # mypy sees it; at run time refused before sending
    except vd.QueryError as exc:
        print(f"{type(exc).__name__}: {exc}")
    try:
        api.trims.search(colour="red")  # type: ignore[call-arg]  # a typo mypy also sees
    except vd.QueryError as exc:  # found before anything is sent
        print(f"{type(exc).__name__}: {exc}")
