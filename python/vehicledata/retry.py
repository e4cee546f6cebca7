"""Retry policy with urllib3's vocabulary: ``vehicledata.Retry``.

    >>> Retry(total=5, backoff_factor=1.0, status_forcelist={429, 502, 503})

``Retry`` is the C++ ``RetryPolicy`` the client runs, bound as an immutable
class (``cpp/bindings/options_bindings.cpp``); the decision to retry, the
backoff and ``Retry-After`` are taken in C++ (``RetryState`` in
``cpp/client/retry.cpp``).  The sleep before retry *n* is
``min(backoff_factor * 2**(n-1), backoff_max)`` plus ``uniform(0, backoff_jitter)``;
on a status in ``status_forcelist`` a ``Retry-After`` header (seconds or HTTP
date) replaces it when ``respect_retry_after``.  A sleep that would take the
call's total of sleeps (one request, or one crawl's pages together) past ``max_wait`` raises the
error instead of sleeping.  ``Retry.coerce(value)``
turns ``None``, an int or a bool into a policy.  See docs/client.md, "Retries".
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import _core

if TYPE_CHECKING:
    from ._core import _Retry as Retry
else:
    Retry = _core.client.Retry

__all__ = ["Retry"]
