"""A hostile HTTP server for the client's reliability tests (loopback only).

Fixed-body attacks use ``client_support.stub_server``; this server is for the
ones a fixed body cannot express: endless or lying bodies, gzip bombs, drips.
The first path segment names the attack, so a client whose ``base_url`` is
``<server>/<attack>`` meets it on every request (``/api/...`` follows):

    endless     200, chunked, zeros without end
    long        200, Content-Length: 2 GiB, zeros until the client hangs up
    claim       200, Content-Length: 2 GB claimed, 10 bytes, then silence
    error       500 with an endless chunked body
    bomb        200, Content-Encoding: gzip, 260 KB inflating to 256 MiB
    drip        200, one byte a second
    truncated   200, Content-Length: 1000, 10 bytes, then the connection closes
    redirect    302 to another origin (must not be followed)
    norange     200 with the whole of a small valid ZIP, whatever ``Range`` asks for
    trickle     200, Content-Length: 10 MB, 2 KB a second (above curl's low-speed limit)
    fat         page 1: an envelope announcing 4 pages; pages 2-4: 6 MiB each, sent over ~2 s
                (a parallel crawl holds them at once)

``sent`` counts the bytes written per attack (how far the client let it go).
"""
from __future__ import annotations

import contextlib
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator

_BOMB: Dict[int, bytes] = {}


def gzip_bomb(inflated: int = 256 << 20) -> bytes:
    """A gzip stream of `inflated` zero bytes (about 1 MB per GiB)."""
    if inflated not in _BOMB:
        z = zlib.compressobj(9, zlib.DEFLATED, 31)
        chunk = bytes(1 << 20)
        parts = [z.compress(chunk) for _ in range(inflated >> 20)]
        parts.append(z.flush())
        _BOMB[inflated] = b"".join(parts)
    return _BOMB[inflated]


def small_zip() -> bytes:
    """A valid ZIP of one small CSV member (what ``norange`` serves)."""
    import io
    import zipfile

    buf = io.BytesIO()
    member = zipfile.ZipInfo("makes.csv", date_time=(2024, 1, 1, 0, 0, 0))  # a fixed time: the same bytes every call
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, "id,name\n" + "".join(f"{i},Make {i}\n" for i in range(2000)), zipfile.ZIP_DEFLATED)
    return buf.getvalue()


class HostileServer:
    def __init__(self) -> None:
        self.sent: Dict[str, int] = {}
        self.requests: Dict[str, int] = {}
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                server.serve(self)

            do_POST = do_GET  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]  # resets are the point
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        gzip_bomb()  # compressed before serving (seconds on a busy machine), not inside a client's timeout

    def _write(self, attack: str, h: BaseHTTPRequestHandler, data: bytes) -> bool:
        try:
            h.wfile.write(data)
            h.wfile.flush()
        except OSError:
            return False
        self.sent[attack] = self.sent.get(attack, 0) + len(data)
        return not self._stop.is_set()

    def serve(self, h: BaseHTTPRequestHandler) -> None:
        attack = h.path.split("/")[1]
        self.requests[attack] = self.requests.get(attack, 0) + 1
        length = int(h.headers.get("Content-Length") or 0)
        if length:
            h.rfile.read(min(length, 1 << 16))
        zeros = bytes(1 << 16)
        deadline = time.monotonic() + 120  # every attack ends by itself eventually
        if attack in ("endless", "error"):
            h.send_response(200 if attack == "endless" else 500)
            h.send_header("Content-Type", "application/json")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            chunk = b"%x\r\n" % len(zeros) + zeros + b"\r\n"
            while time.monotonic() < deadline and self._write(attack, h, chunk):
                pass
        elif attack == "long":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(2 << 30))
            h.end_headers()
            while time.monotonic() < deadline and self._write(attack, h, zeros):
                pass
        elif attack == "claim":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", "2000000000")
            h.end_headers()
            self._write(attack, h, b'{"data":[]')
            self._stop.wait(30)
        elif attack == "bomb":
            body = gzip_bomb()
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            self._write(attack, h, body)
        elif attack == "drip":
            h.send_response(200)
            h.send_header("Content-Type", "application/zip")
            h.send_header("Content-Length", "1000000")
            h.end_headers()
            while time.monotonic() < deadline and self._write(attack, h, b"P"):
                if self._stop.wait(1.0):
                    break
        elif attack == "truncated":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", "1000")
            h.end_headers()
            self._write(attack, h, b'{"data":[]')
            h.close_connection = True
        elif attack == "norange":
            body = small_zip()
            h.send_response(200)
            h.send_header("Content-Type", "application/zip")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            self._write(attack, h, body)
        elif attack == "trickle":
            h.send_response(200)
            h.send_header("Content-Type", "application/zip")
            h.send_header("Content-Length", "10000000")
            h.end_headers()
            while time.monotonic() < deadline and self._write(attack, h, b"P" * 2048):
                if self._stop.wait(1.0):
                    break
        elif attack == "fat":
            if "page=" not in h.path:
                body = (b'{"collection":{"url":"/api/models","count":1,"pages":4,"total":4,"next":"/api/models?page=2",'
                        b'"prev":""},"data":[{"id":1,"make_id":1,"name":"A"}]}')
                h.send_response(200)
                h.send_header("Content-Type", "application/json")
                h.send_header("Content-Length", str(len(body)))
                h.end_headers()
                self._write(attack, h, body)
                return
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(6 << 20))
            h.end_headers()
            for _ in range((6 << 20) // len(zeros)):
                if not self._write(attack, h, zeros) or self._stop.wait(0.02):
                    break
        elif attack == "redirect":
            h.send_response(302)
            h.send_header("Location", "http://localhost:9/api/makes")
            h.send_header("Content-Length", "0")
            h.end_headers()
        else:
            h.send_error(404)

    def start(self) -> "HostileServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def hostile_server() -> Iterator[HostileServer]:
    server = HostileServer().start()
    try:
        yield server
    finally:
        server.stop()


def peak_rss_kb() -> int:
    """This process's peak resident set (VmHWM) in KiB, from /proc."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


__all__ = ["HostileServer", "hostile_server", "gzip_bomb", "peak_rss_kb"]
