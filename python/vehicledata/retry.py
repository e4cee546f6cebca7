"""Retry policy with urllib3's vocabulary.

    >>> Retry(total=5, backoff_factor=1.0, status_forcelist={429, 502, 503})

The sleep before retry *n* is ``min(backoff_factor * 2**(n-1), backoff_max)``
plus ``uniform(0, backoff_jitter)``; on a status in ``status_forcelist`` a
``Retry-After`` header (seconds or HTTP date) replaces it when
``respect_retry_after``.  A single sleep longer than ``max_wait`` raises the
error instead of sleeping.  Every sleep is logged at INFO on the
``vehicledata`` logger; Ctrl-C interrupts it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Union


@dataclass(frozen=True)
class Retry:
    total: int = 3
    backoff_factor: float = 0.5
    backoff_max: float = 30.0
    backoff_jitter: float = 0.1
    status_forcelist: FrozenSet[int] = field(default_factory=lambda: frozenset({429, 503}))
    respect_retry_after: bool = True
    max_wait: float = 120.0
    retry_transport_errors: bool = True  # connection errors, drops, truncated bodies, timeouts

    def __post_init__(self) -> None:
        if self.total < 0:
            raise ValueError(f"Retry.total must be >= 0, not {self.total}")
        for name in ("backoff_factor", "backoff_max", "backoff_jitter", "max_wait"):
            if getattr(self, name) < 0:
                raise ValueError(f"Retry.{name} must be >= 0, not {getattr(self, name)}")
        object.__setattr__(self, "status_forcelist", frozenset(int(s) for s in self.status_forcelist))

    def backoff(self, retry: int) -> float:
        """The exponential sleep (without jitter) before retry number ``retry`` (1-based)."""
        if retry < 1 or self.backoff_factor <= 0:
            return 0.0
        return float(min(self.backoff_factor * 2 ** (retry - 1), self.backoff_max))

    def core_options(self) -> Dict[str, Any]:
        return {
            "retry_total": self.total,
            "backoff_factor": self.backoff_factor,
            "backoff_max": self.backoff_max,
            "backoff_jitter": self.backoff_jitter,
            "status_forcelist": sorted(self.status_forcelist),
            "respect_retry_after": self.respect_retry_after,
            "max_wait": self.max_wait,
            "retry_transport_errors": self.retry_transport_errors,
        }

    @classmethod
    def coerce(cls, value: Union["Retry", int, bool, None]) -> "Retry":
        """``None``: defaults; an int: that many retries; ``False``/0: no retries."""
        if value is None or value is True:
            return cls()
        if isinstance(value, Retry):
            return value
        if value is False:
            return cls(total=0)
        if isinstance(value, int):
            return cls(total=value)
        raise TypeError(f"retry must be a Retry, an int or None, not {type(value).__name__}")


__all__ = ["Retry"]
