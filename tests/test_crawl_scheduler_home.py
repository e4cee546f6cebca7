"""One crawl scheduler (issue 39, point 2): which target of a crawl starts when, a retry's delay
and the reorder window are decided in `cpp/client/page_scheduler.cpp` (`PageScheduler`, unit-tested
by ctest over an injected clock: cpp/tests/client_page_scheduler_test.cpp) and nowhere else. Both
drivers, the blocking `Client::fetch_pages` and the asyncio face's `Engine`, ask it."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOME = {"cpp/client/page_scheduler.cpp", "cpp/include/vehicledata/client/page_scheduler.h",
        "cpp/tests/client_page_scheduler_test.cpp"}
# The scheduler's own state, as the two drivers spelled it before it had one home.
STATE = re.compile(r"\bnot_before\b|\bin_window\b|\bfrontier\b|\bpending\.(push_front|push_back|erase|pop_front)\b")


def sources():
    for path in sorted((ROOT / "cpp").rglob("*")):
        if path.suffix in (".cpp", ".h"):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_no_driver_keeps_scheduling_state_of_its_own() -> None:
    found = [f"{name}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}"
             for name, text in sources() if name not in HOME for m in STATE.finditer(text)]
    assert not found, found


def test_both_drivers_ask_the_scheduler() -> None:
    text = dict(sources())
    for driver in ("cpp/client/client.cpp", "cpp/client/engine.cpp"):
        assert '#include "vehicledata/client/page_scheduler.h"' in text[driver], driver
        assert "take_due(" in text[driver] and "retry_at(" in text[driver] and "delivered(" in text[driver], driver
    assert "class PageScheduler" in text["cpp/include/vehicledata/client/page_scheduler.h"]
    assert "TEST(PageScheduler," in text["cpp/tests/client_page_scheduler_test.cpp"]
