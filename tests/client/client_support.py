"""Helpers of the client tests that are not fixtures (imported by the test modules)."""
from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, Mapping, Tuple


# ---- a stub HTTP server, for what the emulator never does -------------------------------------
# answer(path, request headers) -> (status, response headers, body)
Answer = Callable[[str, Mapping[str, str]], Tuple[int, Dict[str, str], bytes]]


@contextlib.contextmanager
def stub_server(answer: Answer) -> Iterator[str]:
    """A loopback HTTP server answering every GET (and POST) with ``answer``; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            status, headers, body = answer(self.path, self.headers)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802 (login; the request body is read and ignored)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.do_GET()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def make_async(url: str, account: Any = "premium", **kw: Any) -> Any:
    """A vd.AsyncClient of the emulator as conftest's clients (no client-side rate limit, short
    backoffs); ``account`` a DEMO_ACCOUNTS entry (default premium's), None: anonymous."""
    import vehicledata as vd
    from vehicledata.testing import DEMO_ACCOUNTS

    kw.setdefault("rate_limit", None)
    kw.setdefault("retry", vd.Retry(total=3, backoff_factor=0.01, backoff_jitter=0.0))
    if account == "premium":
        account = DEMO_ACCOUNTS["premium"]
    token, secret = (account["api_token"], account["api_secret"]) if account else ("", "")
    return vd.AsyncClient(base_url=url, api_token=token, api_secret=secret, **kw)


# ---- recorded answers (vehicledata.testing.ReplayServer): no dataset, no emulator ---------------
#: The emulator's makes search as the premium account sees it, 20 a page (tools/record_replay.py).
REPLAY_MAKES = Path(__file__).resolve().parents[1] / "data" / "replay_makes.jsonl"
REPLAY_SEARCH = "/api/makes/v2"
REPLAY_LIMIT = 20


def replay_options(**kw: Any) -> Dict[str, Any]:
    """Options of a client of a ReplayServer: any credentials (its login answers every one), no
    client-side rate limits, short backoffs without jitter; ``kw`` replaces any of them."""
    import vehicledata as vd

    options: Dict[str, Any] = dict(api_token="replay-token", api_secret="replay-secret", rate_limit=None,
                                   login_rate_limit=None, retry=vd.Retry(total=3, backoff_factor=0.01,
                                                                          backoff_jitter=0.0))
    options.update(kw)
    return options


def recorded_pages(path: Any = None) -> Dict[int, Any]:
    """page number -> the stdlib's reading of the recorded body of that page of the makes search
    (the oracle of the replay tests, read without the client)."""
    import json
    from urllib.parse import parse_qs, urlsplit

    pages: Dict[int, Any] = {}
    with open(path or REPLAY_MAKES, encoding="utf-8") as fh:
        for line in list(fh)[1:]:
            item = json.loads(line)
            parts = urlsplit(item["target"])
            if parts.path == REPLAY_SEARCH and item["status"] == 200:
                pages[int(parse_qs(parts.query).get("page", ["1"])[0])] = json.loads(item["body"])
    return pages
