"""The door between the Python layer and the C++ core: what a Pager, a DataFeed and the resources
need from their Client, one small object instead of its private parts.

The Client builds one :class:`Fetcher` and hands it to every Pager and DataFeed it makes; every
request of a resource goes through it.  A request is a bound endpoint
(:class:`vehicledata.schema.BoundEndpoint`: the endpoint of the schema table, with its record,
``Shape`` and ``Kind``, and the target to send), never loose strings.  It sends through the
client's C++ core (auth, retries, rate limit, parallel pages applied there), turns paths into URLs
and makes progress bars (tqdm; docs/client.md, "Progress").  ``vehicledata.aio.AsyncFetcher`` is
its asyncio twin, with the same methods awaited.
"""
from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from .schema import BoundEndpoint


def _in_jupyter() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


_HINTED: Dict[str, bool] = {}


def _has_ipywidgets() -> bool:
    """True when ipywidgets is importable; else one clear hint (once per process) and text bars."""
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        if not _HINTED.get("ipywidgets"):
            _HINTED["ipywidgets"] = True
            print("vehicledata: progress bars are shown as text; `pip install ipywidgets` for notebook widgets",
                  file=sys.stderr)
        return False
    return True


class Fetcher:
    """Requests of one Client: pages, downloads, URLs and progress bars.

    ``core`` gives the client's C++ core (it raises once the client is closed); ``base_url`` is the
    client's; ``progress`` its default for progress bars (None: only in Jupyter); ``max_parallel``
    its page concurrency; ``records`` makes the records of a core page (the client passes
    ``pager.records_of``).
    """

    def __init__(self, core: Callable[[], Any], *, base_url: str, max_parallel: int,
                 progress: Optional[bool], records: Callable[[Any], List[Any]]) -> None:
        self._core = core
        self._records = records  # core page -> records (pager.records_of, handed in: no import of the pager)
        self.base_url = base_url
        self.max_parallel = max_parallel
        self.progress = progress

    @property
    def authenticated(self) -> bool:
        """True when the client sends credentials (else the service serves only demo data)."""
        return bool(self._core().has_credentials)

    def wait_budget(self) -> Any:
        """A new budget for the retry sleeps of one call (a crawl): pass it to each of the call's
        requests, so that their sleeps together stay within the retry policy's ``max_wait``."""
        from . import _core

        return _core.client.WaitBudget()

    def get_page(self, page: BoundEndpoint, verbose: bool = False, budget: Any = None,
                 fields: Optional[Sequence[str]] = None) -> Any:
        """One page (a core Page): ``page.target`` decoded as its endpoint's record and shape;
        ``budget``: the call's :meth:`wait_budget` (None: this request's sleeps only are capped);
        ``fields``: decode only these fields of the record (a projection; None: all of them)."""
        return self._core().get_page(page.target, page.record, page.shape.value, verbose, budget, fields)

    def get_pages(self, pages: Sequence[BoundEndpoint], verbose: bool = False, first: Any = None,
                  first_number: int = 1, numbers: Optional[Sequence[int]] = None, budget: Any = None,
                  fields: Optional[Sequence[str]] = None) -> List[Any]:
        """Several pages of one endpoint fetched in parallel (up to ``max_parallel`` at a time), in
        the order asked.  With ``first`` (page ``first_number`` of the crawl) each page, numbered by
        ``numbers``, is checked against it in C++ as it arrives (PaginationError); ``fields`` as in
        :meth:`get_page`."""
        if not pages:
            return []
        targets, record, shape = on_the_wire(pages)
        return self._core().get_pages(targets, record, shape, verbose, first, first_number, numbers, budget, fields)

    def collect_pages(self, first: Any, pages: Sequence[BoundEndpoint], verbose: bool = False,
                      first_number: int = 1, numbers: Optional[Sequence[int]] = None, budget: Any = None,
                      fields: Optional[Sequence[str]] = None) -> Any:
        """``first`` (page ``first_number``) with ``pages`` (numbered by ``numbers``) appended in
        C++, each checked against it as it arrives (PaginationError): the merged page.
        ``fields`` as in :meth:`get_page` (the ones ``first`` was decoded with)."""
        targets, record, shape = on_the_wire(pages)
        return self._core().collect_pages(first, targets, record, shape, verbose, first_number, numbers, budget,
                                          fields)

    def fetch_pages_settled(self, pages: Sequence[BoundEndpoint], parallel: int,
                            on_done: Callable[[int, Any, Optional[int], Optional[str]], None]) -> None:
        """``pages`` (of one endpoint) fetched at most ``parallel`` at once (inside ``max_parallel``,
        the rate limit, the retries per page); ``on_done(index, page, None, None)`` as each page
        arrives, or ``on_done(index, None, status, message)`` for one the server refuses for itself
        (the batch goes on); what else fails ends the batch and is raised."""
        if not pages:
            return
        targets, record, shape = on_the_wire(pages)
        self._core().fetch_pages_settled(targets, record, shape, False, parallel, on_done)

    def one(self, page: BoundEndpoint, verbose: bool = False) -> Any:
        """The single record an object-shaped endpoint answers."""
        from ._targets import check_target

        return self._records(self.get_page(page.at(check_target(page.target)), verbose))[0]

    def get(self, target: str) -> Dict[str, Any]:
        """A raw GET of ``target`` (auth, retries, the rate limit; not decoded): the core's
        {status, url, content_type, http_version, body} (``Client.get_json``)."""
        return dict(self._core().get(target))

    def url_for(self, target: str) -> str:
        """The absolute URL of a path (or of an absolute URL the service sent)."""
        return str(self._core().url_for(target))

    def download(self, page: BoundEndpoint, dest: str, resume: bool,
                 on_progress: Optional[Callable[[int, int], None]], timeout: float = 0.0,
                 max_bytes: int = 0) -> Dict[str, Any]:
        """Stream ``page.target`` into the file ``dest`` (resumed with a Range request when ``resume``;
        ``timeout``: total seconds, ``max_bytes``: largest file, 0: the core's defaults).
        ``on_progress(done, total)`` is called last with the file's size as both, so a bar ends at
        the size even when nothing was left to fetch (a complete partial file: 416)."""
        return finish_download(dict(self._core().download(page.target, dest, resume, on_progress, timeout,
                                                           max_bytes)),
                               on_progress)

    def progress_bar(self, progress: Optional[bool], total: Optional[int], desc: str, unit: str,
                     probe: bool = False) -> Any:
        """A tqdm bar when asked (or in Jupyter), else None; ``probe`` only answers whether one would be shown."""
        return progress_bar(progress if progress is not None else self.progress, total, desc, unit, probe)


def on_the_wire(pages: Sequence[BoundEndpoint]) -> Tuple[List[str], str, str]:
    """(targets, record, shape) of requests of one endpoint, as the C++ core takes them (the
    Fetcher's and vehicledata.aio's AsyncFetcher's several-page calls).  ValueError for none, or
    for requests of several endpoints (one call decodes one record)."""
    if not pages:
        raise ValueError("no requests")
    ep = pages[0].endpoint
    if any(p.endpoint is not ep and p.endpoint != ep for p in pages):
        raise ValueError(f"requests of several endpoints in one call: {sorted({p.path for p in pages})}")
    return [p.target for p in pages], ep.record, ep.shape.value


def finish_download(result: Dict[str, Any], on_progress: Optional[Callable[[int, int], None]]) -> Dict[str, Any]:
    """A finished download's result, after ``on_progress(size, size)``: a bar ends at the file's size
    even when nothing was left to fetch (a complete partial file: 416).  The Fetcher's and
    vehicledata.aio's AsyncFetcher's downloads."""
    if on_progress is not None:
        size = int(result["bytes"])
        on_progress(size, size)
    return result


def progress_bar(progress: Optional[bool], total: Optional[int], desc: str, unit: str, probe: bool = False) -> Any:
    """A tqdm bar when ``progress`` (None: only in Jupyter), else None; ``probe`` only answers whether
    one would be shown (the Fetcher's and vehicledata.aio's AsyncFetcher's bars)."""
    enabled = progress
    if enabled is None:
        enabled = _in_jupyter()
    if not enabled:
        return None
    if probe:
        return True
    jupyter = _in_jupyter()
    try:
        if jupyter and _has_ipywidgets():
            from tqdm.notebook import tqdm
        else:
            from tqdm import tqdm
    except ImportError:
        if progress:
            warnings.warn("progress bars need tqdm: pip install 'pyvehicledata[progress]'", stacklevel=4)
        return None
    # In a notebook the bar stays visible after completion (the cell's record of the work).
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "B", leave=jupyter)
