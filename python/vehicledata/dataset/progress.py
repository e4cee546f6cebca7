"""Progress of long build steps: tqdm on a terminal when installed, else periodic lines."""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, Optional, TextIO, Union

ProgressArg = Union[None, bool, "Reporter", Callable[[str, int, Optional[int]], None]]


class Stage:
    """One step: update(done) as it goes, close() at the end (prints its time)."""

    def __init__(self, reporter: "Reporter", label: str, total: Optional[int], unit: str) -> None:
        self.reporter, self.label, self.total, self.unit = reporter, label, total, unit
        self.start = self.last = time.perf_counter()
        self.done = 0
        self._bar: Any = None
        if reporter.enabled and reporter.use_tqdm:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=label, unit=unit, unit_scale=unit == "B", leave=False,
                             file=reporter.stream)

    def update(self, done: int) -> None:
        if self.reporter.callback:
            self.reporter.callback(self.label, done, self.total)
        if self._bar is not None:
            self._bar.update(done - self.done)
        elif self.reporter.enabled:
            now = time.perf_counter()
            if now - self.last >= self.reporter.interval:
                self.last = now
                pct = f" ({100.0 * done / self.total:.0f}%)" if self.total else ""
                self.reporter.line(f"  {self.label}: {self._fmt(done)}{pct}")
        self.done = done

    def _fmt(self, n: int) -> str:
        if self.unit == "B":
            return f"{n / 1e6:.1f} MB"
        return f"{n:,} {self.unit}"

    def close(self, summary: str = "") -> float:
        seconds = time.perf_counter() - self.start
        if self._bar is not None:
            self._bar.close()
        if self.reporter.enabled:
            self.reporter.line(f"  {self.label}: {summary or self._fmt(self.done)} in {seconds:.2f} s")
        return seconds


class Reporter:
    def __init__(self, enabled: bool = True, stream: Optional[TextIO] = None, interval: float = 2.0,
                 callback: Optional[Callable[[str, int, Optional[int]], None]] = None) -> None:
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.interval = interval
        self.callback = callback
        try:
            import tqdm  # noqa: F401

            has_tqdm = True
        except ImportError:
            has_tqdm = False
        self.use_tqdm = enabled and has_tqdm and bool(getattr(self.stream, "isatty", lambda: False)())

    def line(self, text: str) -> None:
        if self.enabled:
            print(text, file=self.stream, flush=True)

    def stage(self, label: str, total: Optional[int] = None, unit: str = "rows") -> Stage:
        return Stage(self, label, total, unit)


def reporter_for(progress: ProgressArg) -> Reporter:
    """None/False: silent; True: to stderr; a Reporter; or a callable(label, done, total)."""
    if isinstance(progress, Reporter):
        return progress
    if progress is True:
        return Reporter(True)
    if callable(progress):
        return Reporter(False, callback=progress)
    return Reporter(False)
